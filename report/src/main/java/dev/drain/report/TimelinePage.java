package dev.drain.report;

import dev.drain.measure.Json;
import dev.drain.measure.Provenance;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The contract report as one self-contained HTML page ({@code ./contract-report --html}): for each
 * case on each intake, its row of the report and its {@link Timeline} drawn in SVG. No script, no
 * external file: the page can be opened anywhere, and the data each drawing was made from is in
 * the page too, as JSON, so a check can compare the two.
 */
final class TimelinePage {
    private TimelinePage() {}

    /** One case on one intake: its row and its timeline. */
    record Entry(CaseResult result, String shows, Timeline timeline) {}

    private static final int WIDTH = 1000;
    private static final int LEFT = 90;
    /**
     * A lane, from its top: the markers (9 px), the bars (16 px), then a row (13 px) for the labels
     * of bars too short to hold theirs.
     */
    private static final int LANE = 38;
    private static final int BAR_TOP = 9;
    private static final int BAR = 16;
    private static final int LEAD_HEIGHT = 60;
    /** About how wide a character of a bar's label is, at its size: to tell whether it fits on the bar. */
    private static final double LABEL_CHAR = 7.0;
    /** The colour of text, and of the lanes' lines: neutral, no mark uses them. */
    static final String TEXT = "#1f2328";
    static final String MUTED = "#57606a";
    static final String GRID = "#eaeef2";

    /** How a swatch of the legend is drawn: as the mark it stands for. */
    enum Shape { BAR, LANE_MARKER, RUN_MARKER, LINE, DASHED_LINE }

    /**
     * One colour of the page and the one thing it means.
     *
     * @param key what the drawing code asks for: a bar's {@link Timeline.Bar#drawnAs()}, a
     *     marker's kind ({@code round} for every interrupt round), {@code lead} or {@code bound}
     * @param label what the legend calls it
     * @param colour its colour, used for nothing else on the page
     * @param shape how the legend draws it
     */
    record Swatch(String key, String label, String colour, Shape shape) {}

    /**
     * Every colour the timelines use, each for one thing, in the legend's order: attempts by how
     * they ended, the markers in a lane, the markers of the whole run, and the lead against its
     * bound. Distinct from each other and from {@link #TEXT}, {@link #MUTED} and {@link #GRID}.
     */
    static final List<Swatch> SWATCHES = List.of(
            new Swatch("succeeded", "succeeded", "#008856", Shape.BAR),
            new Swatch("retried", "failed or timed out, then retried", "#f3c300", Shape.BAR),
            new Swatch("failed", "failed", "#be0032", Shape.BAR),
            new Swatch("timed out", "timed out", "#f38400", Shape.BAR),
            new Swatch("cancelled", "cancelled", "#848482", Shape.BAR),
            new Swatch("stuck", "stuck", "#875692", Shape.BAR),
            new Swatch("timeout", "timeout", "#882d17", Shape.LANE_MARKER),
            new Swatch("round", "interrupt round (2, 3)", "#e68fac", Shape.LANE_MARKER),
            new Swatch("stop", "requestStop()", "#0067a5", Shape.RUN_MARKER),
            new Swatch("abort", "abort()", "#000000", Shape.RUN_MARKER),
            new Swatch("close", "close (abandoned)", "#8db600", Shape.RUN_MARKER),
            new Swatch("lead", "lead of the source", "#2b3d26", Shape.LINE),
            new Swatch("bound", "its bound", "#654522", Shape.DASHED_LINE));

    /** {@return the colour of {@code key}} */
    static String colour(String key) {
        return SWATCHES.stream().filter(s -> s.key().equals(key)).map(Swatch::colour).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no colour for '" + key + "'"));
    }

    static String render(Provenance provenance, List<Entry> entries) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
            .append("<title>drain: the worker-pool contract, in time</title>\n<style>\n")
            .append("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:").append(TEXT).append(";background:#fff}\n")
            .append("h1{font-size:20px} h2{font-size:15px;margin:28px 0 4px} .meta,.row{color:").append(MUTED).append("}\n")
            .append("svg.timeline{display:block;border:1px solid #d0d7de;background:#fafbfc;margin-top:6px}\n")
            .append(".legend{margin:4px 0} .legend b{font-weight:600;margin-right:8px} .legend span{display:inline-block;")
            .append("margin-right:14px} .legend svg{vertical-align:-2px;margin-right:4px}\n")
            .append(".label{font-size:11px;font-weight:600;fill:").append(TEXT).append(";paint-order:stroke;stroke:#fff;stroke-width:3px;")
            .append("stroke-linejoin:round}\n</style></head><body>\n")
            .append("<h1>drain: the worker-pool contract, in time</h1>\n<p class=\"meta\">commit ")
            .append(escape(provenance.source())).append(", ").append(escape(provenance.date())).append(", JDK ")
            .append(escape(provenance.jdk())).append(". Each timeline is drawn from the pool's own JDK Flight ")
            .append("Recorder events: a lane per worker, a bar per attempt labelled with its item (and #2, #3 for ")
            .append("its later attempts), a marker per timeout, interrupt round, stop, abort and close; below, the ")
            .append("lead of the source at each pull against its bound. Each colour means one thing.</p>\n");
        legend(html, "attempts", Shape.BAR);
        legend(html, "in a lane", Shape.LANE_MARKER);
        legend(html, "the whole run", Shape.RUN_MARKER);
        html.append("<p class=\"legend\"><b>the lead</b>");
        SWATCHES.stream().filter(s -> s.shape() == Shape.LINE || s.shape() == Shape.DASHED_LINE).forEach(s -> swatch(html, s));
        html.append("</p>\n");
        List<Object> data = new ArrayList<>();
        for (Entry entry : entries) {
            CaseResult r = entry.result();
            String id = r.name() + "-" + r.intake();
            html.append("<section id=\"").append(id).append("\"><h2>").append(escape(r.name())).append(" · ")
                .append(escape(r.intake())).append(r.passed() ? " ✓" : " ✗").append("</h2>\n<p class=\"row\">")
                .append(escape(entry.shows())).append(". Outcome: ").append(escape(r.outcome())).append("; results ")
                .append(escape(r.resultsText())).append("; max lead ").append(r.maxLead()).append('/')
                .append(r.leadBound()).append("; task_delta ").append(r.taskDelta()).append(".</p>\n")
                .append(svg(entry.timeline())).append("</section>\n");
            data.add(Map.of("id", id, "timeline", entry.timeline().toJson()));
        }
        html.append("<script type=\"application/json\" id=\"timelines\">\n")
            .append(Json.write(Map.of("timelines", data)).replace("</", "<\\/")).append("</script>\n</body></html>\n");
        return html.toString();
    }

    /** One line of the legend: the swatches of one shape. */
    private static void legend(StringBuilder html, String title, Shape shape) {
        html.append("<p class=\"legend\"><b>").append(title).append("</b>");
        SWATCHES.stream().filter(s -> s.shape() == shape).forEach(s -> swatch(html, s));
        html.append("</p>\n");
    }

    /** A swatch: a small drawing of the mark, in its colour, and its label. */
    private static void swatch(StringBuilder html, Swatch s) {
        String c = s.colour();
        String shape = switch (s.shape()) {
            case BAR -> "<rect x=\"0\" y=\"2\" width=\"18\" height=\"10\" rx=\"2\" fill=\"" + c + "\"/>";
            case LANE_MARKER -> "<path d=\"M4 2 l10 0 l-5 9 z\" fill=\"" + c + "\"/>";
            case RUN_MARKER -> "<line x1=\"9\" x2=\"9\" y1=\"0\" y2=\"14\" stroke=\"" + c
                    + "\" stroke-width=\"2\" stroke-dasharray=\"4 3\"/>";
            case LINE -> "<path d=\"M0 11 h7 v-8 h11\" fill=\"none\" stroke=\"" + c + "\" stroke-width=\"2\"/>";
            case DASHED_LINE -> "<line x1=\"0\" x2=\"18\" y1=\"7\" y2=\"7\" stroke=\"" + c
                    + "\" stroke-width=\"2\" stroke-dasharray=\"5 4\"/>";
        };
        html.append("<span><svg width=\"18\" height=\"14\" aria-hidden=\"true\">").append(shape).append("</svg>")
            .append(escape(s.label())).append("</span>");
    }

    /** One timeline: lanes, bars and markers above, the lead below. */
    static String svg(Timeline t) {
        int lanes = Math.max(1, t.workers().size());
        int top = 22;
        int plotHeight = lanes * LANE;
        int height = top + plotHeight + 14 + LEAD_HEIGHT + 22;
        double span = Math.max(1, t.span().toNanos());
        double plotWidth = WIDTH - LEFT - 20;
        StringBuilder s = new StringBuilder();
        s.append("<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
         .append(height).append("\" role=\"img\" aria-label=\"").append(escape(t.title())).append("\">\n");
        for (int i = 0; i < t.workers().size(); i++) {
            int worker = t.workers().get(i);
            int y = top + i * LANE;
            s.append("<text x=\"8\" y=\"").append(y + BAR_TOP + BAR / 2 + 4).append("\" font-size=\"12\" fill=\"").append(TEXT)
             .append("\">").append(worker < 0 ? "producer" : "worker " + worker).append("</text>")
             .append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - 20).append("\" y1=\"")
             .append(y + LANE).append("\" y2=\"").append(y + LANE).append("\" stroke=\"").append(GRID).append("\"/>\n");
        }
        Map<Integer, Double> labelsEnd = new HashMap<>(); // by lane: where its row of labels is taken up to
        for (Timeline.Bar b : t.bars()) {
            int lane = t.workers().indexOf(b.worker());
            double x = LEFT + plotWidth * b.start().toNanos() / span;
            double w = Math.max(2, plotWidth * (b.end().toNanos() - b.start().toNanos()) / span);
            int y = top + lane * LANE + BAR_TOP;
            String label = b.item() + (b.attempt() > 1 ? " #" + b.attempt() : "");
            double labelWidth = label.length() * LABEL_CHAR;
            // on the bar if it fits; else in the row below it, from the bar's start, after the label before it
            boolean inside = w >= labelWidth + 8;
            double labelX = inside ? x + 4 : Math.min(Math.max(x, labelsEnd.getOrDefault(lane, 0.0) + 5),
                    WIDTH - 2 - labelWidth);
            if (!inside) {
                labelsEnd.put(lane, labelX + labelWidth);
            }
            s.append("<rect class=\"attempt\" x=\"").append(fmt(x)).append("\" y=\"").append(y)
             .append("\" width=\"").append(fmt(w)).append("\" height=\"").append(BAR).append("\" rx=\"2\" fill=\"")
             .append(colour(b.drawnAs())).append("\"><title>item ").append(escape(b.item())).append(", attempt ")
             .append(b.attempt()).append(": ").append(escape(b.outcome())).append(b.retried() ? ", then retried" : "")
             .append("</title></rect>")
             .append("<text class=\"label\" x=\"").append(fmt(labelX)).append("\" y=\"")
             .append(inside ? y + BAR / 2 + 4 : y + BAR + 11).append("\">").append(escape(label)).append("</text>\n");
        }
        for (Timeline.Marker m : t.markers()) {
            double x = LEFT + plotWidth * m.at().toNanos() / span;
            String colour = colour(m.kind().startsWith("round") ? "round" : m.kind());
            if (m.worker() == Timeline.RUN) {
                s.append("<line class=\"marker\" x1=\"").append(fmt(x)).append("\" x2=\"").append(fmt(x)).append("\" y1=\"")
                 .append(top - 8).append("\" y2=\"").append(top + plotHeight).append("\" stroke=\"").append(colour)
                 .append("\" stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>").append(m.kind()).append("</title></line>")
                 .append("<text x=\"").append(fmt(x + 3)).append("\" y=\"").append(top - 10).append("\" font-size=\"11\" fill=\"")
                 .append(colour).append("\">").append(m.kind()).append("</text>\n");
            } else {
                int y = top + Math.max(0, t.workers().indexOf(m.worker())) * LANE + BAR_TOP;
                s.append("<path class=\"marker\" d=\"M").append(fmt(x)).append(' ').append(y + 1)
                 .append(" l-5 -8 l10 0 z\" fill=\"").append(colour).append("\"><title>").append(m.kind())
                 .append(", item ").append(escape(m.item())).append("</title></path>");
                if (m.kind().startsWith("round")) {
                    s.append("<text class=\"label\" x=\"").append(fmt(x + 6)).append("\" y=\"").append(y - 1)
                     .append("\" style=\"font-size:10px\">").append(m.kind().substring("round ".length())).append("</text>");
                }
                s.append('\n');
            }
        }
        int leadTop = top + plotHeight + 14;
        long maxLead = Math.max(t.leadBound(), t.lead().stream().mapToLong(Timeline.LeadPoint::lead).max().orElse(1));
        double boundY = leadTop + LEAD_HEIGHT - LEAD_HEIGHT * (double) t.leadBound() / Math.max(1, maxLead);
        String bound = colour("bound");
        s.append("<text x=\"8\" y=\"").append(leadTop + LEAD_HEIGHT / 2 + 4).append("\" font-size=\"12\" fill=\"")
         .append(TEXT).append("\">lead</text>")
         .append("<line class=\"bound\" x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - 20).append("\" y1=\"")
         .append(fmt(boundY)).append("\" y2=\"").append(fmt(boundY)).append("\" stroke=\"").append(bound)
         .append("\" stroke-width=\"2\" stroke-dasharray=\"5 4\"/>")
         .append("<text x=\"").append(WIDTH - 18 - 60).append("\" y=\"").append(fmt(boundY - 4))
         .append("\" font-size=\"10\" fill=\"").append(bound).append("\">bound ").append(t.leadBound()).append("</text>\n");
        if (!t.lead().isEmpty()) {
            StringBuilder points = new StringBuilder();
            double lastY = leadTop + LEAD_HEIGHT;
            for (Timeline.LeadPoint p : t.lead()) {
                double x = LEFT + plotWidth * p.at().toNanos() / span;
                double y = leadTop + LEAD_HEIGHT - LEAD_HEIGHT * (double) p.lead() / Math.max(1, maxLead);
                points.append(fmt(x)).append(',').append(fmt(lastY)).append(' ').append(fmt(x)).append(',').append(fmt(y)).append(' ');
                lastY = y;
            }
            points.append(WIDTH - 20).append(',').append(fmt(lastY));
            s.append("<polyline class=\"lead\" points=\"").append(points.toString().strip())
             .append("\" fill=\"none\" stroke=\"").append(colour("lead")).append("\" stroke-width=\"2\"/>\n");
        }
        s.append("<text x=\"").append(LEFT).append("\" y=\"").append(height - 6).append("\" font-size=\"10\" fill=\"")
         .append(MUTED).append("\">0 ms</text>")
         .append("<text x=\"").append(WIDTH - 80).append("\" y=\"").append(height - 6).append("\" font-size=\"10\" fill=\"")
         .append(MUTED).append("\">").append(String.format(Locale.ROOT, "%.1f ms", span / 1e6)).append("</text>\n</svg>\n");
        return s.toString();
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
