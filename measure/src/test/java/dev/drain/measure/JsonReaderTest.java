package dev.drain.measure;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The reports' JSON (decision 0051): what {@link Json} writes, {@link JsonReader} reads back as it
 * was, and the reader takes RFC 8259's grammar only.
 */
class JsonReaderTest {

    /** A document of every kind of value, written and read back, is the same maps, lists and values, in the same order. */
    @Test
    void whatJsonWritesReadsBackTheSame() {
        Map<String, Object> document = new LinkedHashMap<>();
        document.put("text", "a \"quoted\" \\ line\nwith a tab\t, a control \u0001 and é");
        document.put("count", 42L);
        document.put("ratio", 0.25);
        document.put("flags", List.of(true, false));
        document.put("nested", Map.of("empty", Map.of(), "none", List.of()));
        Map<String, ?> read = JsonReader.parseObject(Json.write(document));
        assertThat(read).isEqualTo(document);
        assertThat(read.keySet()).containsExactly("text", "count", "ratio", "flags", "nested");
    }

    /** A document whose top level is not an object, or that has text after its end, is refused. */
    @Test
    void onlyOneObjectIsADocument() {
        assertThatThrownBy(() -> JsonReader.parseObject("[1, 2]")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not an object");
        assertThatThrownBy(() -> JsonReader.parseObject("{} {}")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("trailing text");
    }

    /** Numbers outside RFC 8259's grammar are refused: a plus sign, a leading zero, a bare point. */
    @Test
    void numbersFollowTheRfc() {
        for (String bad : List.of("+1", "01", "1.", ".5", "1e", "--1")) {
            assertThatThrownBy(() -> JsonReader.parseObject("{\"n\": " + bad + "}")).as(bad)
                    .isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(JsonReader.parseObject("{\"a\": -0, \"b\": 1.5e-3, \"c\": 10E2}"))
                .isEqualTo(Map.of("a", 0L, "b", 1.5e-3, "c", 1000.0));
    }
}
