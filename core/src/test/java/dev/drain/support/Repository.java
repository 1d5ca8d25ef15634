package dev.drain.support;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the repository's own files are ({@code specs/}, {@code README.md}): the tests run from the
 * repository's root under Maven, but a tool that forks them from a module's folder (PIT's
 * minions run in {@code core/}) does not, so a test that reads them finds the root first.
 */
public final class Repository {
    private Repository() {}

    /**
     * {@return the nearest folder, from the working directory up, that holds {@code specs/}}
     *
     * @throws IllegalStateException if there is none
     */
    public static Path root() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isDirectory(dir.resolve("specs"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no folder above " + Path.of("").toAbsolutePath() + " holds specs/");
    }
}
