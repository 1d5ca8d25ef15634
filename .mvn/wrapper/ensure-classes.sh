# ensure-classes.sh: compiles with ./mvnw what a launcher runs, when its classes are missing or older
# than their sources. Sourced, not run, by the launchers (contract-report, jshell/drain-jshell), after
# find-jdk.sh has set `jdk`; the sourcing script defines `fail` and sets `base_dir` and `name`.
#
#   ensure_classes              the core and the measure (core/target/classes, measure/target/classes):
#                               the JShell scripts' class path (startup.jsh imports JvmThreads)
#   ensure_report_classes       the contract report (report/) and every module it uses, and writes its
#                               runtime class path to report/target/classpath.txt
#   ensure_lab_classes MODULE   an adapter (jobtable or kafka), the lab and the measure, and writes the
#                               adapter's and the lab's runtime class paths to MODULE/target/classpath.txt
#                               and lab/target/classpath.txt
# (decision 0050: the report, the lab and the measure are modules of their own)

ensure_classes() {
    local classes="$base_dir/core/target/classes"
    if [ ! -d "$classes" ] || [ ! -d "$base_dir/measure/target/classes" ] \
        || [ -n "$(find "$base_dir/core/src/main" "$base_dir/measure/src/main" -newer "$classes" -print -quit)" ]; then
        printf '%s: compiling drain first (./mvnw -q -B -pl core,measure compile; about half a minute) ...\n' "$name" >&2
        JAVA_HOME=$jdk "$base_dir/mvnw" -q -B -pl core,measure compile || fail "./mvnw -q -B -pl core,measure compile failed; see above"
        touch "$classes" # an unchanged class file keeps its time; this marks the compile
    fi
}

ensure_report_classes() {
    ensure_built report report "the contract report" core measure jobtable lab report
}

ensure_lab_classes() {
    local module=$1
    ensure_built "$module" "$module,lab" "its $module module and the lab" core measure "$module" lab
}

# ensure_built MARKER PROJECTS WHAT MODULE...: compiles PROJECTS and what they depend on (-am) when
# MARKER/target/classpath.txt is missing or older than the sources of a MODULE (their tests too: the
# report uses the job table's test jar) or a pom, and writes each project's runtime class path (its
# optional dependencies included) to its target/classpath.txt. The phase is test-compile, not
# compile: build-classpath resolves every scope, and the tests of the adapters depend on the core's
# test jar (and the report on the job table's), which the reactor finds (as target/test-classes)
# only once those tests are compiled; with compile alone, a machine whose local repository has no
# installed drain fails to resolve them.
ensure_built() {
    local marker_module=$1 projects=$2 what=$3
    shift 3
    local marker="$base_dir/$marker_module/target/classpath.txt" stale=no module
    [ -f "$marker" ] && [ -d "$base_dir/$marker_module/target/classes" ] || stale=yes
    for module in "$@"; do
        if [ "$stale" = no ] && { [ ! -d "$base_dir/$module/target/classes" ] \
            || [ -n "$(find "$base_dir/$module/src" "$base_dir/$module/pom.xml" -newer "$marker" -print -quit)" ]; }; then
            stale=yes
        fi
    done
    if [ "$stale" = no ] && [ -n "$(find "$base_dir/pom.xml" -newer "$marker" -print -quit)" ]; then
        stale=yes
    fi
    if [ "$stale" = yes ]; then
        printf '%s: compiling drain and %s first (./mvnw -q -B -pl %s -am test-compile; a minute or two) ...\n' \
            "$name" "$what" "$projects" >&2
        JAVA_HOME=$jdk "$base_dir/mvnw" -q -B -pl "$projects" -am test-compile dependency:build-classpath \
            -Dmdep.outputFile=target/classpath.txt -DincludeScope=runtime \
            || fail "./mvnw -q -B -pl $projects -am test-compile failed; see above"
        touch "$marker" "$base_dir/core/target/classes" # unchanged class files keep their times; these mark the compile
    fi
}
