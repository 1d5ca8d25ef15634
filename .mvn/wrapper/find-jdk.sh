# find-jdk.sh: finds a JDK of a given feature release. Sourced, not run, by ./mvnw and by
# jshell/drain-jshell, so that both find the same JDK the same way.
#
# Looks at $JAVA_HOME first, then the `java` on the PATH, then the usual install folders; JAVA_HOME
# may be unset. The sourcing script defines two functions, which print one line on stderr with its
# own prefix: `fail` (and exits with status 1) and `warn`.
#
#   find_jdk 25    sets `jdk` to the JDK's home, warns if JAVA_HOME points at another JDK, or fails

# Prints the feature release of the JDK at $1 (e.g. 25), or nothing if $1 is not a JDK.
feature_of() {
    local home=$1 version=""
    [ -x "$home/bin/java" ] && [ -x "$home/bin/javac" ] || return 0
    if [ -f "$home/release" ]; then
        version=$(sed -n 's/^JAVA_VERSION="\([^"]*\)"/\1/p' "$home/release")
    fi
    if [ -z "$version" ]; then
        version=$("$home/bin/java" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)
    fi
    version=${version#1.}          # 1.8.0 style
    printf '%s' "${version%%[.+-]*}"
}

find_jdk() {
    local java_feature=$1 java_bin pattern home feature seen=""
    local candidates=()
    [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
    if command -v java >/dev/null 2>&1; then
        java_bin=$(command -v java)
        java_bin=$(readlink -f "$java_bin" 2>/dev/null || printf '%s' "$java_bin")
        candidates+=("$(dirname "$(dirname "$java_bin")")")
    fi
    for pattern in /usr/lib/jvm/* /usr/java/* /usr/local/java/* /opt/java/* /opt/jdk* /opt/*jdk* \
                   "$HOME"/.sdkman/candidates/java/* "$HOME"/.jdks/* "$HOME"/.local/share/mise/installs/java/* \
                   /Library/Java/JavaVirtualMachines/*/Contents/Home; do
        [ -d "$pattern" ] && candidates+=("$pattern")
    done

    jdk=""
    for home in "${candidates[@]}"; do
        feature=$(feature_of "$home")
        [ -n "$feature" ] && seen="$seen ${feature}"
        if [ "$feature" = "$java_feature" ]; then jdk=$home; break; fi
    done
    if [ -z "$jdk" ]; then
        fail "no JDK $java_feature found (looked at JAVA_HOME, the java on PATH and the usual install folders;" \
             "found:${seen:- none}); install a JDK $java_feature or point JAVA_HOME at one"
    fi
    if [ -n "${JAVA_HOME:-}" ] && [ "$jdk" != "$JAVA_HOME" ]; then
        warn "JAVA_HOME is not a JDK $java_feature; using $jdk"
    fi
}
