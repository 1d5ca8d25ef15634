package dev.drain.measure;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Executable;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.net.URISyntaxException;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Contract point 11, the static one, checked at run time: no public signature of the library uses
 * a raw type or a bare {@code Object} (Python's "mypy --strict with no {@code Any}"). The build
 * adds the rest: {@code -Xlint:all -Werror}, Error Prone and NullAway over {@code @NullMarked}
 * packages. Methods that override {@code Object}'s own ({@code equals(Object)}) are exempt: the
 * language fixes their signature.
 *
 * <p>Each caller names the packages it holds to the rule, by one class of each: the core's
 * {@code ApiSignatureTest} the library's two packages, the foils and this one; the contract report
 * the library's two and its own. The classes may be in a folder or a jar.
 */
public final class ApiScan {
    private ApiScan() {}

    /**
     * Scans the public API of some packages.
     *
     * @param anchors one class of each package to scan
     * @return every problem found in their public types, one line each, such as
     *     {@code "WorkerPool.run parameter: raw Iterator"}; empty if there is none
     */
    public static List<String> problems(List<Class<?>> anchors) {
        List<String> problems = new ArrayList<>();
        for (Class<?> type : publicTypes(anchors)) {
            problems.addAll(problems(type));
        }
        return problems;
    }

    /**
     * Scans one type's public and protected signatures.
     *
     * @param type the type
     * @return the problems found, one line each
     */
    public static List<String> problems(Class<?> type) {
        List<String> problems = new ArrayList<>();
        for (Type supertype : type.getGenericInterfaces()) {
            check(type.getSimpleName() + " implements", supertype, problems);
        }
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class) { // every class extends Object implicitly
            check(type.getSimpleName() + " extends", superclass, problems);
        }
        List<Executable> executables = new ArrayList<>(List.of(type.getDeclaredConstructors()));
        executables.addAll(List.of(type.getDeclaredMethods()));
        for (Executable e : executables) {
            if (!isVisible(e) || e.isSynthetic() || overridesObject(e)) {
                continue;
            }
            String where = type.getSimpleName() + "." + (e instanceof Method ? e.getName() : "new");
            for (Type parameter : e.getGenericParameterTypes()) {
                check(where + " parameter", parameter, problems);
            }
            if (e instanceof Method m) {
                check(where + " return", m.getGenericReturnType(), problems);
            }
            for (Type thrown : e.getGenericExceptionTypes()) {
                check(where + " throws", thrown, problems);
            }
        }
        for (var field : type.getDeclaredFields()) {
            if (isVisible(field) && !field.isSynthetic()) {
                check(type.getSimpleName() + "." + field.getName(), field.getGenericType(), problems);
            }
        }
        return problems;
    }

    /**
     * Lists the public API types of some packages, from their compiled classes.
     *
     * @param anchors one class of each package, loaded from a folder of classes or from a jar
     * @return the public (and publicly nested) types of those packages
     */
    public static List<Class<?>> publicTypes(List<Class<?>> anchors) {
        List<Class<?>> types = new ArrayList<>();
        for (Class<?> anchor : anchors) {
            Path location;
            try {
                location = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
            } catch (URISyntaxException e) {
                throw new IllegalStateException("cannot locate the classes of " + anchor.getPackageName(), e);
            }
            String folder = anchor.getPackageName().replace('.', '/');
            try {
                if (Files.isDirectory(location)) {
                    types.addAll(publicTypes(anchor, location.resolve(folder)));
                } else {
                    try (FileSystem jar = FileSystems.newFileSystem(location)) {
                        types.addAll(publicTypes(anchor, jar.getPath(folder)));
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return types;
    }

    /** The public API types among the class files in {@code folder}, the folder of {@code anchor}'s package. */
    private static List<Class<?>> publicTypes(Class<?> anchor, Path folder) throws IOException {
        List<Class<?>> types = new ArrayList<>();
        try (Stream<Path> files = Files.list(folder)) {
            for (String file : files.map(f -> f.getFileName().toString()).filter(f -> f.endsWith(".class")).sorted().toList()) {
                String name = anchor.getPackageName() + "." + file.replace(".class", "");
                Class<?> type = Class.forName(name, false, anchor.getClassLoader());
                if (isPublicApi(type)) {
                    types.add(type);
                }
            }
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("a class file without its class: " + e.getMessage(), e);
        }
        return types;
    }

    private static boolean isPublicApi(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
            if (!Modifier.isPublic(c.getModifiers()) || c.isAnonymousClass() || c.isSynthetic()) {
                return false;
            }
        }
        return true;
    }

    private static boolean isVisible(Member member) {
        int modifiers = member.getModifiers();
        return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
    }

    private static boolean overridesObject(Executable e) {
        try {
            Object.class.getMethod(e.getName(), e.getParameterTypes());
            return true;
        } catch (NoSuchMethodException notObjects) {
            return false;
        }
    }

    /** Adds a problem for each raw type or bare Object inside {@code type}. */
    private static void check(String where, Type type, List<String> problems) {
        switch (type) {
            case Class<?> c when c == Object.class -> problems.add(where + ": bare Object");
            case Class<?> c when c.isArray() -> check(where, c.getComponentType(), problems);
            case Class<?> c when c.getTypeParameters().length > 0 -> problems.add(where + ": raw " + c.getSimpleName());
            case Class<?> c -> { }
            case ParameterizedType p -> {
                for (Type argument : p.getActualTypeArguments()) {
                    check(where, argument, problems);
                }
            }
            case GenericArrayType a -> check(where, a.getGenericComponentType(), problems);
            case WildcardType w -> {
                for (Type bound : w.getLowerBounds()) {
                    check(where, bound, problems);
                }
                for (Type bound : w.getUpperBounds()) {
                    if (bound != Object.class) { // "?" is an unbounded wildcard, not a bare Object
                        check(where, bound, problems);
                    }
                }
            }
            case TypeVariable<?> v -> { }
            default -> problems.add(where + ": unexpected type " + type);
        }
    }
}
