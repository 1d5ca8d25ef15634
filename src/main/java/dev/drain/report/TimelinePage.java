package dev.drain.report;

import java.util.ArrayList;
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
    private static final int LANE = 22;
    private static final int LEAD_HEIGHT = 60;

    /** The colour of each attempt outcome, and of each marker. */
    static final Map<String, String> COLOURS = Map.of("succeeded", "#2e9e44", "failed", "#d62d20",
            "timed out", "#f08c00", "cancelled", "#8a8f98", "stuck", "#7b2cbf", "timeout", "#f08c00",
            "round", "#d62d20", "stop", "#1f6feb", "abort", "#d62d20", "close", "#6e40c9");

    static String render(Provenance provenance, List<Entry> entries) {
        StringBuilder html = new StringBuilder();
        html.append("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
            .append("<title>drain: the worker-pool contract, in time</title>\n<style>\n")
            .append("body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#1f2328;background:#fff}\n")
            .append("h1{font-size:20px} h2{font-size:15px;margin:28px 0 4px} .meta,.row{color:#57606a}\n")
            .append("svg{display:block;border:1px solid #d0d7de;background:#fafbfc;margin-top:6px}\n")
            .append(".legend span{display:inline-block;margin-right:14px} .sw{display:inline-block;width:12px;")
            .append("height:12px;margin-right:4px;vertical-align:-1px}\n</style></head><body>\n")
            .append("<h1>drain: the worker-pool contract, in time</h1>\n<p class=\"meta\">commit ")
            .append(escape(provenance.source())).append(", ").append(escape(provenance.date())).append(", JDK ")
            .append(escape(provenance.jdk())).append(". Each timeline is drawn from the pool's own JDK Flight ")
            .append("Recorder events: a lane per worker (and the producer's), a bar per attempt, a marker per ")
            .append("timeout, interrupt round, stop, abort and close; below, the lead of the source at each pull ")
            .append("against its bound (dashed).</p>\n<p class=\"legend\">");
        for (String key : List.of("succeeded", "failed", "timed out", "cancelled", "stuck", "timeout", "round",
                "stop", "abort", "close")) {
            html.append("<span><i class=\"sw\" style=\"background:").append(COLOURS.get(key)).append("\"></i>")
                .append(key.equals("round") ? "interrupt round" : key).append("</span>");
        }
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

    /** One timeline: lanes, bars and markers above, the lead below. */
    static String svg(Timeline t) {
        int lanes = Math.max(1, t.workers().size());
        int top = 22;
        int plotHeight = lanes * LANE;
        int height = top + plotHeight + 14 + LEAD_HEIGHT + 22;
        double span = Math.max(1, t.span().toNanos());
        double plotWidth = WIDTH - LEFT - 20;
        StringBuilder s = new StringBuilder();
        s.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(WIDTH).append("\" height=\"")
         .append(height).append("\" role=\"img\" aria-label=\"").append(escape(t.title())).append("\">\n");
        for (int i = 0; i < t.workers().size(); i++) {
            int worker = t.workers().get(i);
            int y = top + i * LANE;
            s.append("<text x=\"8\" y=\"").append(y + 15).append("\" font-size=\"12\">")
             .append(worker < 0 ? "producer" : "worker " + worker).append("</text>")
             .append("<line x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - 20).append("\" y1=\"")
             .append(y + LANE).append("\" y2=\"").append(y + LANE).append("\" stroke=\"#eaeef2\"/>\n");
        }
        for (Timeline.Bar b : t.bars()) {
            int lane = t.workers().indexOf(b.worker());
            double x = LEFT + plotWidth * b.start().toNanos() / span;
            double w = Math.max(2, plotWidth * (b.end().toNanos() - b.start().toNanos()) / span);
            s.append("<rect class=\"attempt\" x=\"").append(fmt(x)).append("\" y=\"").append(top + lane * LANE + 4)
             .append("\" width=\"").append(fmt(w)).append("\" height=\"").append(LANE - 8).append("\" rx=\"2\" fill=\"")
             .append(COLOURS.getOrDefault(b.outcome(), "#000")).append("\"><title>item ").append(escape(b.item()))
             .append(", attempt ").append(b.attempt()).append(": ").append(escape(b.outcome())).append("</title></rect>\n");
        }
        for (Timeline.Marker m : t.markers()) {
            double x = LEFT + plotWidth * m.at().toNanos() / span;
            String colour = COLOURS.get(m.kind().startsWith("round") ? "round" : m.kind());
            if (m.worker() == Timeline.RUN) {
                s.append("<line class=\"marker\" x1=\"").append(fmt(x)).append("\" x2=\"").append(fmt(x)).append("\" y1=\"")
                 .append(top - 8).append("\" y2=\"").append(top + plotHeight).append("\" stroke=\"").append(colour)
                 .append("\" stroke-width=\"2\" stroke-dasharray=\"4 3\"><title>").append(m.kind()).append("</title></line>")
                 .append("<text x=\"").append(fmt(x + 3)).append("\" y=\"").append(top - 10).append("\" font-size=\"11\" fill=\"")
                 .append(colour).append("\">").append(m.kind()).append("</text>\n");
            } else {
                int y = top + Math.max(0, t.workers().indexOf(m.worker())) * LANE;
                s.append("<path class=\"marker\" d=\"M").append(fmt(x)).append(' ').append(y + 1).append(" l-5 -1 l5 9 l5 -9 z\" fill=\"")
                 .append(colour).append("\"><title>").append(m.kind()).append(", item ").append(escape(m.item()))
                 .append("</title></path>");
                if (m.kind().startsWith("round")) {
                    s.append("<text x=\"").append(fmt(x + 6)).append("\" y=\"").append(y + 9).append("\" font-size=\"9\" fill=\"")
                     .append(colour).append("\">").append(m.kind().substring("round ".length())).append("</text>");
                }
                s.append('\n');
            }
        }
        int leadTop = top + plotHeight + 14;
        long maxLead = Math.max(t.leadBound(), t.lead().stream().mapToLong(Timeline.LeadPoint::lead).max().orElse(1));
        double boundY = leadTop + LEAD_HEIGHT - LEAD_HEIGHT * (double) t.leadBound() / Math.max(1, maxLead);
        s.append("<text x=\"8\" y=\"").append(leadTop + LEAD_HEIGHT / 2 + 4).append("\" font-size=\"12\">lead</text>")
         .append("<line class=\"bound\" x1=\"").append(LEFT).append("\" x2=\"").append(WIDTH - 20).append("\" y1=\"")
         .append(fmt(boundY)).append("\" y2=\"").append(fmt(boundY)).append("\" stroke=\"#d62d20\" stroke-dasharray=\"5 4\"/>")
         .append("<text x=\"").append(WIDTH - 18 - 60).append("\" y=\"").append(fmt(boundY - 3)).append("\" font-size=\"10\" fill=\"#d62d20\">bound ")
         .append(t.leadBound()).append("</text>\n");
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
             .append("\" fill=\"none\" stroke=\"#1f6feb\" stroke-width=\"1.5\"/>\n");
        }
        s.append("<text x=\"").append(LEFT).append("\" y=\"").append(height - 6).append("\" font-size=\"10\" fill=\"#57606a\">0 ms</text>")
         .append("<text x=\"").append(WIDTH - 80).append("\" y=\"").append(height - 6).append("\" font-size=\"10\" fill=\"#57606a\">")
         .append(String.format(Locale.ROOT, "%.1f ms", span / 1e6)).append("</text>\n</svg>\n");
        return s.toString();
    }

    private static String fmt(double value) {
        return String.format(Locale.ROOT, "%.1f", value);
    }

    static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
