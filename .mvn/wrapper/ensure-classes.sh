# ensure-classes.sh: compiles drain's core with ./mvnw when core/target/classes is missing or
# older than core/src/main. Sourced, not run, by the launchers (contract-report, jshell/drain-jshell), after
# find-jdk.sh has set `jdk`; the sourcing script defines `fail` and sets `base_dir` and `name`.
#
#   ensure_classes    compiles if needed (a note on stderr), or fails

ensure_classes() {
    local classes="$base_dir/core/target/classes"
    if [ ! -d "$classes" ] || [ -n "$(find "$base_dir/core/src/main" -newer "$classes" -print -quit)" ]; then
        printf '%s: compiling drain first (./mvnw -q -B -pl core compile; about half a minute) ...\n' "$name" >&2
        JAVA_HOME=$jdk "$base_dir/mvnw" -q -B -pl core compile || fail "./mvnw -q -B -pl core compile failed; see above"
        touch "$classes" # an unchanged class file keeps its time; this marks the compile
    fi
}
