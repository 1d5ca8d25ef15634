import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

/**
 * Checks a screenshot of target/contract-report.html, taken by .ci/check-timeline in a real
 * headless browser: the page was drawn (it is not blank), and every colour of the page's legend
 * (TimelinePage.SWATCHES: bars of each outcome, the markers, the lead and its bound, each colour
 * one thing) is drawn below the legend. Run with the JDK's source launcher:
 * {@code java .ci/CheckScreenshot.java target/contract-report.png target/contract-report.html}.
 * Prints one line per colour and exits 1 if one is missing.
 */
public class CheckScreenshot {
    public static void main(String[] args) throws IOException {
        BufferedImage image = ImageIO.read(new File(args[0]));
        if (image == null) {
            System.out.println("not an image: " + args[0]);
            System.exit(1);
        }
        // The legend's swatches: a small drawing in one colour, then what the colour means.
        Map<String, Integer> colours = new LinkedHashMap<>();
        Matcher swatch = Pattern.compile("<span><svg[^>]*>[^<]*<[a-z]+ [^>]*?(?:fill|stroke)=\"#([0-9a-f]{6})\"[^>]*/></svg>([^<]+)</span>")
                .matcher(Files.readString(Path.of(args[1])));
        while (swatch.find()) {
            colours.put(swatch.group(2), Integer.parseInt(swatch.group(1), 16));
        }
        if (colours.size() < 10) {
            System.out.println("MISSING: the page's legend (" + colours.size() + " swatches found)");
            System.exit(1);
        }
        Map<Integer, Integer> counts = new LinkedHashMap<>();
        long painted = 0;
        // The page's title and legend, whose swatches have every colour, are not counted: only what
        // lies below the first timeline's top border (a long run of its grey, #d0d7de) is.
        int legend = firstBorder(image);
        if (legend < 0) {
            System.out.println("MISSING: no timeline's border on the page");
            System.exit(1);
        }
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
            System.out.printf("%-7s %-34s #%06x: %d pixels%n", seen ? "ok" : "MISSING", colour.getKey(), colour.getValue(), n);
            ok &= seen;
        }
        System.exit(ok ? 0 : 1);
    }

    /** {@return the first row with a run of at least half the image's width in the timelines' border colour, or -1} */
    static int firstBorder(BufferedImage image) {
        for (int y = 0; y < image.getHeight(); y++) {
            int run = 0;
            for (int x = 0; x < image.getWidth(); x++) {
                run = (image.getRGB(x, y) & 0xffffff) == 0xd0d7de ? run + 1 : 0;
                if (run >= image.getWidth() / 2) {
                    return y;
                }
            }
        }
        return -1;
    }
}
