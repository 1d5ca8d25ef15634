package dev.drain.support;

import dev.drain.measure.Json;
import dev.drain.measure.Provenance;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilderFactory;
import javax.xml.parsers.ParserConfigurationException;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.SAXException;

/**
 * Writes {@code target/mutation-report.md} (and {@code .json}) beside the property report, from
 * PIT's {@code mutations.xml} and the review of its survivors in {@code specs/mutation-survivors.md}:
 * where the run comes from, how long it took, the score, and every mutant that no test detected,
 * each with the verdict its review gives it, or {@code UNREVIEWED} when it has none.
 *
 * <p>A review row matches a mutant by class, method and PIT's description of the mutation, not by
 * line, so that it survives edits elsewhere in the file; one row covers every mutant with that key.
 * A review row that matches no survivor is listed as stale: its mutant was killed or moved, and the
 * row should go. The mutation profile runs this after PIT ({@code ./mvnw -P mutation verify}).
 */
public final class MutationReport {

    /** One mutant of PIT's report: where it is, what it changed, and whether a test detected it. */
    record Mutant(String clazz, String method, int line, String mutator, String description, String status,
            boolean detected) {

        /** {@return the class without its package, nested classes kept: {@code Run$Attempt}} */
        String simpleClass() {
            return clazz.substring(clazz.lastIndexOf('.') + 1);
        }

        /** {@return the mutator without its package and its "Mutator" suffix} */
        String shortMutator() {
            String name = mutator.substring(mutator.lastIndexOf('.') + 1);
            return name.endsWith("Mutator") ? name.substring(0, name.length() - "Mutator".length()) : name;
        }
    }

    /** A reviewed survivor: the key it matches, and the verdict with its reason. */
    record Review(String clazz, String method, String description, String verdict, String why) {

        boolean matches(Mutant mutant) {
            return clazz.equals(mutant.simpleClass()) && method.equals(mutant.method())
                    && description.equals(mutant.description());
        }
    }

    /** The counts and the score of one run. */
    record Score(int mutants, int killed, int timedOut, int otherDetected, int survived, int noCoverage) {

        static Score of(List<Mutant> mutants) {
            int killed = 0, timedOut = 0, other = 0, survived = 0, noCoverage = 0;
            for (Mutant m : mutants) {
                switch (m.status()) {
                    case "KILLED" -> killed++;
                    case "TIMED_OUT" -> timedOut++;
                    case "SURVIVED" -> survived++;
                    case "NO_COVERAGE" -> noCoverage++;
                    default -> {
                        if (m.detected()) {
                            other++;
                        } else {
                            survived++;
                        }
                    }
                }
            }
            return new Score(mutants.size(), killed, timedOut, other, survived, noCoverage);
        }

        int detected() {
            return killed + timedOut + otherDetected;
        }

        /** {@return PIT's mutation score: detected over all mutants, in percent, rounded down} */
        int percent() {
            return mutants == 0 ? 0 : 100 * detected() / mutants;
        }

        /** {@return PIT's test strength: detected over the mutants some test covers, in percent} */
        int strength() {
            int covered = mutants - noCoverage;
            return covered == 0 ? 0 : 100 * detected() / covered;
        }
    }

    private MutationReport() {}

    /**
     * Reads PIT's XML report and the review, and writes the mutation report.
     *
     * @param args the XML report, the review, the directory to write in, the command that ran, and
     *     when the build started (an ISO instant), from which the run's time is measured
     */
    public static void main(String[] args) throws IOException {
        if (args.length != 5) {
            throw new IllegalArgumentException(
                    "usage: MutationReport <mutations.xml> <mutation-survivors.md> <output dir> <command> <build start>");
        }
        List<Mutant> mutants = readMutants(Path.of(args[0]));
        List<Review> reviews = readReviews(Files.readString(Path.of(args[1])));
        Duration took = Duration.between(Instant.parse(args[4]), Instant.now());
        Path out = Path.of(args[2]);
        Files.createDirectories(out);
        Provenance origin = Provenance.now();
        Files.writeString(out.resolve("mutation-report.md"), markdown(mutants, reviews, origin, args[3], took));
        Files.writeString(out.resolve("mutation-report.json"), json(mutants, reviews, origin, args[3], took));
        Score score = Score.of(mutants);
        long unreviewed = survivors(mutants).stream().filter(m -> review(m, reviews).isEmpty()).count();
        System.out.printf(Locale.ROOT, "mutation report: score %d %% (%d of %d detected), %d survivors, %d unreviewed, in %s%n",
                score.percent(), score.detected(), score.mutants(), score.survived() + score.noCoverage(), unreviewed,
                out.resolve("mutation-report.md"));
    }

    /** {@return every mutant of PIT's XML report, in its order} */
    static List<Mutant> readMutants(Path xml) throws IOException {
        try (InputStream in = Files.newInputStream(xml)) {
            DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
            factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
            NodeList nodes = factory.newDocumentBuilder().parse(in).getElementsByTagName("mutation");
            List<Mutant> mutants = new ArrayList<>();
            for (int i = 0; i < nodes.getLength(); i++) {
                Element e = (Element) nodes.item(i);
                mutants.add(new Mutant(text(e, "mutatedClass"), text(e, "mutatedMethod"),
                        Integer.parseInt(text(e, "lineNumber")), text(e, "mutator"), text(e, "description"),
                        e.getAttribute("status"), Boolean.parseBoolean(e.getAttribute("detected"))));
            }
            return mutants;
        } catch (ParserConfigurationException | SAXException e) {
            throw new IOException("cannot read PIT's report " + xml + ": " + e.getMessage(), e);
        }
    }

    private static String text(Element e, String tag) {
        NodeList found = e.getElementsByTagName(tag);
        return found.getLength() == 0 ? "" : found.item(0).getTextContent().strip();
    }

    private static final Pattern ROW = Pattern.compile(
            "^\\|\\s*`([^`]+)`\\s*\\|\\s*`([^`]+)`\\s*\\|\\s*([^|]+?)\\s*\\|\\s*(\\w+(?: \\w+)?)\\s*\\|\\s*(.+?)\\s*\\|\\s*$");

    /**
     * {@return the review rows of {@code specs/mutation-survivors.md}: table rows of the form
     * {@code | `Class` | `method` | description | verdict | why |}, whose verdict is one word or two
     * ({@code test seam})}
     */
    static List<Review> readReviews(String markdown) {
        List<Review> reviews = new ArrayList<>();
        for (String line : markdown.split("\n", -1)) {
            Matcher row = ROW.matcher(line);
            if (row.matches()) {
                reviews.add(new Review(row.group(1), row.group(2), row.group(3), row.group(4), row.group(5)));
            }
        }
        return reviews;
    }

    static List<Mutant> survivors(List<Mutant> mutants) {
        return mutants.stream().filter(m -> !m.detected()).toList();
    }

    static Optional<Review> review(Mutant mutant, List<Review> reviews) {
        return reviews.stream().filter(r -> r.matches(mutant)).findFirst();
    }

    static List<Review> stale(List<Mutant> mutants, List<Review> reviews) {
        List<Mutant> survivors = survivors(mutants);
        return reviews.stream().filter(r -> survivors.stream().noneMatch(r::matches)).toList();
    }

    static String markdown(List<Mutant> mutants, List<Review> reviews, Provenance origin, String command,
            Duration took) {
        Score score = Score.of(mutants);
        List<Mutant> survivors = survivors(mutants);
        StringBuilder md = new StringBuilder();
        md.append("# Mutation report\n\n")
          .append("- commit: `").append(origin.commit()).append("`, ").append(origin.tree()).append('\n')
          .append("- date: ").append(origin.date()).append('\n')
          .append("- OS: ").append(origin.os()).append(", ").append(origin.cores()).append(" cores\n")
          .append("- JDK: ").append(origin.jdk()).append('\n')
          .append("- command: `").append(command).append("`, which took ").append(minutes(took)).append('\n')
          .append("- reviewed in: `specs/mutation-survivors.md`\n\n");
        md.append("| mutants | killed | timed out | other detected | survived | no coverage | score | test strength |\n")
          .append("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
          .append(String.format(Locale.ROOT, "| %d | %d | %d | %d | %d | %d | %d %% | %d %% |%n%n", score.mutants(),
                  score.killed(), score.timedOut(), score.otherDetected(), score.survived(), score.noCoverage(),
                  score.percent(), score.strength()));
        md.append("The score is the share of mutants some test detected (killed, timed out, or crashed its JVM); ")
          .append("the test strength leaves out the mutants no test reaches. ")
          .append("A timed-out mutant is one that made a test hang: in a concurrent codebase, usually a removed signal.\n\n");
        md.append("## Survivors (").append(survivors.size()).append(")\n\n");
        if (survivors.isEmpty()) {
            md.append("None.\n\n");
        } else {
            md.append("| class | method | line | mutator | mutation | status | verdict | why |\n")
              .append("| --- | --- | ---: | --- | --- | --- | --- | --- |\n");
            for (Mutant m : survivors) {
                Optional<Review> r = review(m, reviews);
                md.append("| `").append(m.simpleClass()).append("` | `").append(m.method()).append("` | ")
                  .append(m.line()).append(" | ").append(m.shortMutator()).append(" | ").append(cell(m.description()))
                  .append(" | ").append(m.status()).append(" | ")
                  .append(r.map(Review::verdict).orElse("**UNREVIEWED**")).append(" | ")
                  .append(r.map(x -> cell(x.why())).orElse("add a test that kills it, or a row to specs/mutation-survivors.md"))
                  .append(" |\n");
            }
            md.append('\n');
        }
        List<Review> stale = stale(mutants, reviews);
        if (!stale.isEmpty()) {
            md.append("## Stale reviews (").append(stale.size()).append(")\n\n")
              .append("These rows of `specs/mutation-survivors.md` match no survivor of this run: a test kills the ")
              .append("mutant now, or the code moved. Remove or update them.\n\n");
            for (Review r : stale) {
                md.append("- `").append(r.clazz()).append("` `").append(r.method()).append("`: ")
                  .append(r.description()).append('\n');
            }
            md.append('\n');
        }
        return md.toString();
    }

    static String json(List<Mutant> mutants, List<Review> reviews, Provenance origin, String command,
            Duration took) {
        Score score = Score.of(mutants);
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("commit", origin.commit());
        doc.put("tree", origin.tree());
        doc.put("date", origin.date());
        doc.put("os", origin.os());
        doc.put("jdk", origin.jdk());
        doc.put("cores", origin.cores());
        doc.put("command", command);
        doc.put("seconds", took.toSeconds());
        Map<String, Object> counts = new LinkedHashMap<>();
        counts.put("mutants", score.mutants());
        counts.put("killed", score.killed());
        counts.put("timedOut", score.timedOut());
        counts.put("otherDetected", score.otherDetected());
        counts.put("survived", score.survived());
        counts.put("noCoverage", score.noCoverage());
        counts.put("scorePercent", score.percent());
        counts.put("testStrengthPercent", score.strength());
        doc.put("score", counts);
        List<Map<String, Object>> rows = new ArrayList<>();
        for (Mutant m : survivors(mutants)) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("class", m.clazz());
            row.put("method", m.method());
            row.put("line", m.line());
            row.put("mutator", m.mutator());
            row.put("description", m.description());
            row.put("status", m.status());
            Optional<Review> r = review(m, reviews);
            row.put("verdict", r.map(Review::verdict).orElse("UNREVIEWED"));
            row.put("why", r.map(Review::why).orElse(""));
            rows.add(row);
        }
        doc.put("survivors", rows);
        return Json.write(doc);
    }

    private static String minutes(Duration took) {
        return took.toMinutes() + " min " + took.toSecondsPart() + " s";
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }
}
