package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.queue.ShutdownQueue;
import java.io.IOException;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * WP-11: every public signature of the library says what it means: no raw types and no bare
 * {@code Object} (Python's "mypy --strict with no Any"). Methods that override {@code Object}'s own
 * ({@code equals(Object)}) are the one exception: their signature is fixed by the language.
 */
class ApiSignatureTest {

    /** Every public class of the two API packages, found from the compiled classes. */
    static List<Class<?>> publicClasses() throws IOException, URISyntaxException, ClassNotFoundException {
        List<Class<?>> classes = new ArrayList<>();
        for (Class<?> anchor : List.of(ShutdownQueue.class, WorkerPool.class)) {
            Path dir = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .resolve(anchor.getPackageName().replace('.', '/'));
            try (Stream<Path> files = Files.list(dir)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".class")).sorted().toList()) {
                    String binaryName = anchor.getPackageName() + "." + file.getFileName().toString().replace(".class", "");
                    Class<?> type = Class.forName(binaryName, false, anchor.getClassLoader());
                    if (isPublicApi(type)) {
                        classes.add(type);
                    }
                }
            }
        }
        return classes;
    }

    private static boolean isPublicApi(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
            if (!Modifier.isPublic(c.getModifiers()) || c.isAnonymousClass() || c.isSynthetic()) {
                return false;
            }
        }
        return true;
    }

    /** WP-11: no public signature in dev.drain.queue or dev.drain.pool uses a raw type or a bare Object. */
    @Test
    void publicSignaturesHaveNoRawTypesAndNoBareObject() throws Exception {
        List<Class<?>> classes = publicClasses();
        assertThat(classes).extracting(Class::getSimpleName)
                .contains("ShutdownQueue", "WorkerPool", "Results", "PoolFailure", "ItemContext");
        List<String> problems = new ArrayList<>();
        for (Class<?> type : classes) {
            for (Type supertype : supertypes(type)) {
                check(type.getName() + " extends/implements", supertype, problems);
            }
            List<Executable> executables = new ArrayList<>(List.of(type.getDeclaredConstructors()));
            executables.addAll(List.of(type.getDeclaredMethods()));
            for (Executable e : executables) {
                if (!isVisible(e) || e.isSynthetic() || overridesObject(e)) {
                    continue;
                }
                String where = type.getSimpleName() + "." + e.getName();
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
        }
        assertThat(problems).isEmpty();
    }

    private static List<Type> supertypes(Class<?> type) {
        List<Type> types = new ArrayList<>(List.of(type.getGenericInterfaces()));
        Type superclass = type.getGenericSuperclass();
        if (superclass != null && superclass != Object.class) { // every class extends Object implicitly
            types.add(superclass);
        }
        return types;
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
