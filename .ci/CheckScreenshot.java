import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.imageio.ImageIO;

/**
 * Checks a screenshot of target/contract-report.html, taken by .ci/check-timeline in a real
 * headless browser: the page was drawn (it is not blank), and every kind of mark the timelines
 * draw is on it, in its colour, below the legend: bars of each outcome, the markers, the lead. Run with the JDK's
 * source launcher: {@code java .ci/CheckScreenshot.java target/contract-report.png}. Prints one
 * line per colour and exits 1 if one is missing.
 */
public class CheckScreenshot {
    public static void main(String[] args) throws IOException {
        BufferedImage image = ImageIO.read(new File(args[0]));
        if (image == null) {
            System.out.println("not an image: " + args[0]);
            System.exit(1);
        }
        // The colours of TimelinePage.COLOURS, and the lead's line.
        Map<String, Integer> colours = new LinkedHashMap<>();
        colours.put("succeeded bars", 0x2e9e44);
        colours.put("failed bars, rounds, abort", 0xd62d20);
        colours.put("timed-out bars and timeouts", 0xf08c00);
        colours.put("cancelled bars", 0x8a8f98);
        colours.put("stuck bars", 0x7b2cbf);
        colours.put("stop markers and the lead", 0x1f6feb);
        colours.put("close markers", 0x6e40c9);
        Map<Integer, Integer> counts = new LinkedHashMap<>();
        long painted = 0;
        int legend = 200; // the page's title and legend, whose swatches have every colour: not counted
        for (int y = legend; y < image.getHeight(); y++) {
            for (int x = 0; x < image.getWidth(); x++) {
                int rgb = image.getRGB(x, y) & 0xffffff;
                counts.merge(rgb, 1, Integer::sum);
                if (rgb != 0xffffff) {
                    painted++;
                }
            }
        }
        boolean ok = true;
        double share = (double) painted / ((long) image.getWidth() * (image.getHeight() - legend));
        System.out.printf("%dx%d pixels, %.1f%% painted%n", image.getWidth(), image.getHeight(), 100 * share);
        if (share < 0.02) {
            System.out.println("MISSING: the page looks blank");
            ok = false;
        }
        for (Map.Entry<String, Integer> colour : colours.entrySet()) {
            int n = counts.getOrDefault(colour.getValue(), 0);
            boolean seen = n >= 20;
            System.out.printf("%-7s %-30s #%06x: %d pixels%n", seen ? "ok" : "MISSING", colour.getKey(), colour.getValue(), n);
            ok &= seen;
        }
        System.exit(ok ? 0 : 1);
    }
}
