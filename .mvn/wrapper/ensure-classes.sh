# ensure-classes.sh: compiles drain's core with ./mvnw when core/target/classes is missing or
# older than core/src/main. Sourced, not run, by the launchers (contract-report, jshell/drain-jshell), after
# find-jdk.sh has set `jdk`; the sourcing script defines `fail` and sets `base_dir` and `name`.
#
#   ensure_classes            compiles if needed (a note on stderr), or fails
#   ensure_durable_classes    the same for the core and the job-table module together, and writes the
#                             latter's runtime class path to jobtable/target/classpath.txt
#   ensure_kafka_classes      the same for the Kafka module (kafka/target/classpath.txt)

ensure_classes() {
    local classes="$base_dir/core/target/classes"
    if [ ! -d "$classes" ] || [ -n "$(find "$base_dir/core/src/main" -newer "$classes" -print -quit)" ]; then
        printf '%s: compiling drain first (./mvnw -q -B -pl core compile; about half a minute) ...\n' "$name" >&2
        JAVA_HOME=$jdk "$base_dir/mvnw" -q -B -pl core compile || fail "./mvnw -q -B -pl core compile failed; see above"
        touch "$classes" # an unchanged class file keeps its time; this marks the compile
    fi
}

ensure_durable_classes() {
    ensure_module_classes jobtable "its job table"
}

ensure_kafka_classes() {
    ensure_module_classes kafka "its Kafka source"
}

# ensure_module_classes MODULE WHAT: compiles the core and MODULE together when either is stale, and
# writes MODULE's runtime class path (its optional dependencies included) to MODULE/target/classpath.txt.
# The phase is test-compile, not compile: build-classpath resolves every scope, and the module's
# tests depend on the core's test jar, which the reactor finds (as core/target/test-classes) only
# once the core's tests are compiled; with compile alone, a machine whose local repository has no
# installed drain fails to resolve it.
ensure_module_classes() {
    local module=$1 what=$2
    local classes="$base_dir/core/target/classes" marker="$base_dir/$module/target/classpath.txt"
    if [ ! -f "$marker" ] || [ ! -d "$base_dir/$module/target/classes" ] || [ ! -d "$classes" ] \
        || [ -n "$(find "$base_dir/core/src/main" "$base_dir/$module/src/main" "$base_dir/$module/pom.xml" \
            "$base_dir/pom.xml" -newer "$marker" -print -quit)" ]; then
        printf '%s: compiling drain and %s first (./mvnw -q -B -pl %s -am test-compile; about a minute) ...\n' \
            "$name" "$what" "$module" >&2
        JAVA_HOME=$jdk "$base_dir/mvnw" -q -B -pl "$module" -am test-compile dependency:build-classpath \
            -Dmdep.outputFile=target/classpath.txt -DincludeScope=runtime -DexcludeArtifactIds=drain \
            || fail "./mvnw -q -B -pl $module -am test-compile failed; see above"
        touch "$classes" "$marker" # an unchanged class file keeps its time; these mark the compile
    fi
}
