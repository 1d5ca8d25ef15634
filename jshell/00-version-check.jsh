// 00: check the setup first: drain needs JDK 25 exactly (StructuredTaskScope is a preview API in 25,
// and preview class files run only on the release that compiled them), preview features on, and
// drain's classes on the class path. jshell/drain-jshell sees to all three; this says which is missing.

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
                " or compile (./mvnw -q -pl core compile) and add --class-path core/target/classes";
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

// A JShell habit for typing along: a line that is already a complete snippet ends it, so break a long
// expression after an operator or a '.', never before.
tryIt("00", "what does a WorkerPool print before it has run: its settings, its state, its live threads?",
        "var first = WorkerPool.<Integer, Integer>builder(n -> n * n).name(\"first\").build();",
        "System.out.println(first + \", live threads: \" + first.liveThreads());");

/exit problem == null ? 0 : 1
