// 17: the run's tree. run() opens the run's StructuredTaskScope on the caller's thread, so the caller's
// ScopedValue bindings reach every handler, and a JSON thread dump shows the run's scopes as a tree under the
// caller: JvmThreads.dump() here, jcmd <pid> Thread.dump_to_file -format=json from outside. Clauses: WP-17, WP-10.

System.out.println("== 17 the run's tree: the caller's binding in every handler, and the thread dump ==");

ScopedValue<String> TENANT = ScopedValue.newInstance();

// jcmdTree(name): the same dump taken from outside, with the JDK's jcmd, read back as a tree (bounded waits).
List<String> jcmdTree(String name) throws Exception {
    Path file = Files.createTempDirectory("drain-dump").resolve("threads.json");
    String jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd").toString();
    Process p = new ProcessBuilder(jcmd, Long.toString(ProcessHandle.current().pid()), "Thread.dump_to_file",
            "-format=json", file.toString()).redirectErrorStream(true).start();
    if (!p.waitFor(10, TimeUnit.SECONDS) || p.exitValue() != 0 || !Files.exists(file)) {
        p.destroyForcibly();
        return List.of("(jcmd did not answer here: " + new String(p.getInputStream().readNBytes(200)).strip() + ")");
    }
    return JvmThreads.parse(Files.readString(file)).tree(name);
}

{
    var started = new CountDownLatch(2);
    var finish = new CountDownLatch(1);
    Map<Integer, String> seen = new ConcurrentSkipListMap<>();
    var pool = WorkerPool.<Integer, Integer>builder(n -> {
        seen.put(n, TENANT.get() + " on " + Thread.currentThread().getName().replaceAll("\\d+$", "<n>"));
        started.countDown();
        await("the dump", finish);            // hold both attempts open while we look
        return n;
    }).workers(2).queueSize(1).itemTimeout(BOUND).name("tree17").build();
    String pid = Long.toString(ProcessHandle.current().pid());

    ScopedValue.where(TENANT, "tenant-42").call(() -> {  // the caller binds its context around the whole run
        try (var results = pool.run(List.of(1, 2, 3, 4))) {
            await("both attempts running", started);
            System.out.println("JvmThreads.dump().tree(\"tree17\"), with two attempts running and the producer waiting:");
            JvmThreads.dump().tree("tree17").forEach(line -> System.out.println("  " + line));
            System.out.println("jcmd " + pid + " Thread.dump_to_file -format=json <file>, from outside, read back:");
            jcmdTree("tree17").forEach(line -> System.out.println("  " + line));
            finish.countDown();
            results.forEachRemaining(n -> { });
        }
        return null;
    });
    System.out.println("What each handler saw of the caller's binding:");
    seen.forEach((n, what) -> System.out.println("  item " + n + ": TENANT = " + what));
    System.out.println("After the run: pool.liveThreads() = " + pool.liveThreads() + ", and the dump shows " +
            JvmThreads.dump().threadsNamed("tree17-").size() + " threads named tree17-");
}

tryIt("17", "in the middle of a run, who owns the run's outermost scope, and whose thread is that?",
        "var owned = WorkerPool.<Integer, Integer>builder(n -> { awaitInterrupt(); return n; }).workers(1).name(\"owned\").build();",
        "try (var r = owned.run(List.of(1))) { System.out.println(JvmThreads.dump().tree(\"owned\").get(0) + \"; this thread: \" + Thread.currentThread().getName()); }");

/exit
