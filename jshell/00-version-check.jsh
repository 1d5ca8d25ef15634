// 00: check the setup before anything else. drain needs JDK 25 exactly (StructuredTaskScope is a
// preview API in 25, and preview class files run only on the release they were compiled for),
// preview features enabled, and drain's classes on the class path. jshell/drain-jshell sees to
// all three; this script says which one is missing when JShell was started some other way.
//
// A JShell habit to keep in mind when you type along: a line that is already a complete snippet
// ends it, so a long expression breaks after an operator, never before.

System.out.println("Runtime.version() = " + Runtime.version() + " (" + System.getProperty("java.vendor") + ")");

String setupProblem() {
    int feature = Runtime.version().feature();
    if (feature != 25) {
        return "drain needs JDK 25, and this JShell runs on JDK " + feature +
                ": start it with ./jshell/drain-jshell, which finds a JDK 25 as ./mvnw does";
    }
    try {
        Class.forName("dev.drain.pool.Structured"); // the one class compiled against a preview API
    } catch (ClassNotFoundException e) {
        return "drain's classes are not on the class path: start JShell with ./jshell/drain-jshell," +
                " or compile (./mvnw -q compile) and add --class-path target/classes";
    } catch (UnsupportedClassVersionError e) {
        return "preview features are off: start JShell with ./jshell/drain-jshell, or add --enable-preview (" +
                e.getMessage() + ")";
    }
    return null;
}

String problem = setupProblem();

if (problem != null) {
    throw new IllegalStateException(problem);
}

System.out.println(problem == null
        ? "OK: JDK 25, preview features on, drain's classes loaded: the other scripts will run."
        : "NOT OK: " + problem);

/exit problem == null ? 0 : 1
