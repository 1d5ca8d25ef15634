package dev.drain.measure;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Where a report comes from, so that it can be cited: the commit it was made from, whether the
 * tree had uncommitted changes, when, on what OS and JDK.
 *
 * @param commit the commit's SHA, or a note that there is none
 * @param tree {@code clean}, {@code dirty (...)} or {@code unknown}
 * @param date when, in UTC, to the second
 * @param os the OS name, version and architecture
 * @param jdk the runtime's version and vendor
 * @param cores available processors
 */
public record Provenance(String commit, String tree, String date, String os, String jdk, int cores) {

    /** {@return where a report made now, in the current directory, comes from} */
    public static Provenance now() {
        String commit = git("rev-parse", "HEAD").orElse("unknown (not a git checkout)");
        String tree = git("status", "--porcelain", "--untracked-files=no")
                .map(status -> status.isBlank() ? "clean" : "dirty (uncommitted changes to tracked files)")
                .orElse("unknown");
        return new Provenance(commit, tree, OffsetDateTime.now(ZoneOffset.UTC).truncatedTo(ChronoUnit.SECONDS).toString(),
                System.getProperty("os.name") + " " + System.getProperty("os.version") + " "
                        + System.getProperty("os.arch"),
                Runtime.version() + " (" + System.getProperty("java.vendor") + ")",
                Runtime.getRuntime().availableProcessors());
    }

    /** {@return the commit and the tree, for a report's first line: {@code 0f59de5 (clean)}} */
    public String source() {
        return (commit.length() == 40 ? commit.substring(0, 12) : commit) + " (" + tree + ")";
    }

    /** {@return the same, as the fields of a JSON object (for {@link Json#write}), in this order} */
    public Map<String, ?> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("commit", commit);
        json.put("tree", tree);
        json.put("date", date);
        json.put("os", os);
        json.put("jdk", jdk);
        json.put("cores", cores);
        return json;
    }

    private static Optional<String> git(String... args) {
        List<String> command = new ArrayList<>(List.of("git"));
        command.addAll(List.of(args));
        try {
            Process git = new ProcessBuilder(command).redirectErrorStream(true).start();
            String out = new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            return git.waitFor(30, TimeUnit.SECONDS) && git.exitValue() == 0 ? Optional.of(out) : Optional.empty();
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }
}
