package dev.drain.support;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.Provenance;
import dev.drain.support.MutationReport.Mutant;
import dev.drain.support.MutationReport.Review;
import dev.drain.support.MutationReport.Score;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The mutation report (specs/README.md, "The reports that cite the specs"): what it reads from
 * PIT's XML and the review of the survivors, and what it writes.
 */
class MutationReportTest {

    private static final String XML = """
            <?xml version="1.0" encoding="UTF-8"?>
            <mutations partial="false">
            <mutation detected='true' status='KILLED' numberOfTestsRun='3'><sourceFile>Run.java</sourceFile><mutatedClass>dev.drain.pool.Run</mutatedClass><mutatedMethod>settle</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>10</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><description>removed call to dev/drain/pool/Ledger::settle</description></mutation>
            <mutation detected='true' status='TIMED_OUT' numberOfTestsRun='1'><sourceFile>ShutdownQueue.java</sourceFile><mutatedClass>dev.drain.queue.ShutdownQueue</mutatedClass><mutatedMethod>wake</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>20</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.VoidMethodCallMutator</mutator><description>removed call to java/util/concurrent/locks/Condition::signal</description></mutation>
            <mutation detected='false' status='SURVIVED' numberOfTestsRun='4'><sourceFile>ShutdownQueue.java</sourceFile><mutatedClass>dev.drain.queue.ShutdownQueue$Waiter</mutatedClass><mutatedMethod>toString</mutatedMethod><methodDescription>()Ljava/lang/String;</methodDescription><lineNumber>30</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.returns.EmptyObjectReturnValsMutator</mutator><description>replaced return value with "" for dev/drain/queue/ShutdownQueue$Waiter::toString</description></mutation>
            <mutation detected='false' status='SURVIVED' numberOfTestsRun='2'><sourceFile>Run.java</sourceFile><mutatedClass>dev.drain.pool.Run</mutatedClass><mutatedMethod>pull</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>40</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.ConditionalsBoundaryMutator</mutator><description>changed conditional boundary</description></mutation>
            <mutation detected='false' status='NO_COVERAGE' numberOfTestsRun='0'><sourceFile>Run.java</sourceFile><mutatedClass>dev.drain.pool.Run</mutatedClass><mutatedMethod>never</mutatedMethod><methodDescription>()V</methodDescription><lineNumber>50</lineNumber><mutator>org.pitest.mutationtest.engine.gregor.mutators.NegateConditionalsMutator</mutator><description>negated conditional</description></mutation>
            </mutations>
            """;

    private static final String REVIEW = """
            # Survivors

            | class | method | mutation | verdict | why |
            | --- | --- | --- | --- | --- |
            | `ShutdownQueue$Waiter` | `toString` | replaced return value with "" for dev/drain/queue/ShutdownQueue$Waiter::toString | equivalent | only a debugger reads it |
            | `Ledger` | `gone` | negated conditional | equivalent | a row whose mutant a test kills now |
            """;

    private static final Provenance ORIGIN = new Provenance("0123456789abcdef0123456789abcdef01234567", "clean",
            "2026-12-01T12:00:00Z", "Linux 6 amd64", "25", 2);

    private static List<Mutant> mutants(Path dir) throws IOException {
        Path xml = dir.resolve("mutations.xml");
        Files.writeString(xml, XML);
        return MutationReport.readMutants(xml);
    }

    private static String report(Path dir) throws IOException {
        return MutationReport.markdown(mutants(dir), MutationReport.readReviews(REVIEW), ORIGIN,
                "./mvnw -P mutation verify", Duration.ofSeconds(3_061));
    }

    /** The score is detected (killed, timed out) over every mutant, and the test strength leaves the uncovered out. */
    @Test
    void scoreCountsTimeoutsAsDetected(@TempDir Path dir) throws IOException {
        Score score = Score.of(mutants(dir));

        assertThat(List.of(score.mutants(), score.detected(), score.survived(), score.noCoverage(), score.percent(),
                score.strength())).containsExactly(5, 2, 2, 1, 40, 50);
    }

    /** The report names the commit, the command and the time the command took, to the second. */
    @Test
    void headerNamesCommitCommandAndTime(@TempDir Path dir) throws IOException {
        assertThat(report(dir)).contains("0123456789abcdef0123456789abcdef01234567", "`./mvnw -P mutation verify`",
                "51 min 1 s", "| 5 | 1 | 1 | 0 | 2 | 1 | 40 % | 50 % |");
    }

    /** A survivor with a review row carries its verdict and reason; one without is flagged UNREVIEWED. */
    @Test
    void survivorsCarryTheirVerdictOrAreFlagged(@TempDir Path dir) throws IOException {
        assertThat(report(dir).lines().filter(line -> line.startsWith("| `")))
                .containsExactly(
                        "| `ShutdownQueue$Waiter` | `toString` | 30 | EmptyObjectReturnVals | replaced return value with \"\" for dev/drain/queue/ShutdownQueue$Waiter::toString | SURVIVED | equivalent | only a debugger reads it |",
                        "| `Run` | `pull` | 40 | ConditionalsBoundary | changed conditional boundary | SURVIVED | **UNREVIEWED** | add a test that kills it, or a row to specs/mutation-survivors.md |",
                        "| `Run` | `never` | 50 | NegateConditionals | negated conditional | NO_COVERAGE | **UNREVIEWED** | add a test that kills it, or a row to specs/mutation-survivors.md |");
    }

    /** A verdict of two words (`test seam`, specs/mutation-survivors.md) is read from its row like one of one word. */
    @Test
    void aTwoWordVerdictIsRead() {
        assertThat(MutationReport.readReviews(
                "| `WaiterLine` | `isParked` | replaced boolean return with false | test seam | only tests call it |"))
                .extracting(Review::verdict).containsExactly("test seam");
    }

    /** A review row that matches no survivor is listed as stale, so the review file cannot rot quietly. */
    @Test
    void reviewsThatMatchNothingAreStale(@TempDir Path dir) throws IOException {
        assertThat(MutationReport.stale(mutants(dir), MutationReport.readReviews(REVIEW)))
                .extracting(Review::clazz).containsExactly("Ledger");
    }
}
