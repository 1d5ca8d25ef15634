package dev.drain.jobtable;

import dev.drain.safe.SafeText;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;

/**
 * How a job's payload of a type of the user's is written to the table, whose payload column is
 * text, and read back (JT-15, decision 0068). A codec is applied at the table's edges: before an
 * enqueue ({@link #encodeAll}, whose text any {@code enqueue} form takes) and in the handler
 * ({@link #read(Job)}). The table, its claims, its settler and its proofs are the same for every
 * payload type, and a payload the codec cannot read is not a crash loop: {@link #read(Job)} throws
 * {@link UnreadablePayload}, which fails the item's attempt like any handler's exception, so the
 * pool records it failed and the settler dead-letters the job with the codec's error, never to be
 * claimed again (unless the pool retries every {@code Exception}: then after its retries).
 *
 * <pre>{@code
 * record Email(String to, String body) {}
 * PayloadCodec<Email> emails = PayloadCodec.of(
 *         e -> mapper.writeValueAsString(e),            // any library's, or by hand
 *         text -> mapper.readValue(text, Email.class));
 * table.enqueue(connection, emails.encodeAll(List.of(new Email("ada@example.com", "hello"))));
 * WorkerPool.<Job>forEach(job -> send(emails.read(job))) ...
 * }</pre>
 *
 * <p>A codec is called on the enqueuer's thread and on the attempts' threads, concurrently: it must
 * be safe for that (a stateless one is). It should read back exactly what it wrote: the table keeps
 * the text exactly (JT-11), the codec its meaning. What it throws is caught as an
 * {@code Exception}: an {@code Error} (a {@code StackOverflowError} on deeply nested text, an
 * {@code OutOfMemoryError}) goes through as it is, and fails the attempt with itself as the cause,
 * like any handler's {@code Error}.
 *
 * @param <P> the payload type
 */
public interface PayloadCodec<P> {

    /**
     * Writes a payload as text.
     *
     * @param payload the payload
     * @return its text: a well-formed string without NUL, which the table keeps exactly (JT-11)
     * @throws Exception if the payload cannot be written
     */
    String encode(P payload) throws Exception;

    /**
     * Reads a payload back from its text.
     *
     * @param text the text {@link #encode} wrote (or anything else a row holds)
     * @return the payload
     * @throws Exception if the text is not one this codec can read
     */
    P decode(String text) throws Exception;

    /**
     * Writes a payload as text: half of a codec, for {@link #of}.
     *
     * @param <P> the payload type
     */
    @FunctionalInterface
    interface Encoder<P> {
        /**
         * Writes a payload.
         *
         * @param payload the payload
         * @return its text
         * @throws Exception if it cannot be written
         */
        String encode(P payload) throws Exception;
    }

    /**
     * Reads a payload from its text: half of a codec, for {@link #of}.
     *
     * @param <P> the payload type
     */
    @FunctionalInterface
    interface Decoder<P> {
        /**
         * Reads a payload.
         *
         * @param text the text
         * @return the payload
         * @throws Exception if the text cannot be read
         */
        P decode(String text) throws Exception;
    }

    /**
     * A codec of two functions.
     *
     * @param encoder writes a payload
     * @param decoder reads one back
     * @param <P> the payload type
     * @return the codec
     */
    static <P> PayloadCodec<P> of(Encoder<P> encoder, Decoder<P> decoder) {
        Objects.requireNonNull(encoder, "encoder");
        Objects.requireNonNull(decoder, "decoder");
        return new PayloadCodec<>() {
            @Override
            public String encode(P payload) throws Exception {
                return encoder.encode(payload);
            }

            @Override
            public P decode(String text) throws Exception {
                return decoder.decode(text);
            }
        };
    }

    /** {@return the codec of text payloads: the text as it is} */
    static PayloadCodec<String> text() {
        return of(text -> text, text -> text);
    }

    /**
     * {@return the codec of byte payloads: Base64 (RFC 4648's basic alphabet, padded)} Text that is
     * not Base64 is unreadable. A payload of {@code n} bytes takes {@code 4 × ceil(n / 3)} characters.
     */
    static PayloadCodec<byte[]> bytes() {
        return of(bytes -> Base64.getEncoder().encodeToString(bytes), text -> Base64.getDecoder().decode(text));
    }

    /**
     * Writes payloads as text for an {@code enqueue}, all or none.
     *
     * @param payloads the payloads, in order
     * @return their texts, in the same order
     * @throws IllegalArgumentException if a payload is null, or the codec throws for it or returns
     *     null: the message names its position, the cause is the codec's (then nothing was enqueued,
     *     since nothing was handed to the table); if the codec was interrupted, the interrupt is
     *     kept on the thread
     */
    default List<String> encodeAll(List<? extends P> payloads) {
        List<String> texts = new ArrayList<>(payloads.size());
        for (int i = 0; i < payloads.size(); i++) {
            P payload = payloads.get(i);
            if (payload == null) {
                throw new IllegalArgumentException("payload " + i + " is null (nothing was enqueued)");
            }
            String text;
            try {
                text = encode(payload);
            } catch (Exception e) {
                if (e instanceof InterruptedException) {
                    Thread.currentThread().interrupt();
                }
                throw new IllegalArgumentException("payload " + i + " cannot be encoded (nothing was enqueued): "
                        + SafeText.of(e), e);
            }
            if (text == null) {
                throw new IllegalArgumentException("payload " + i + " was encoded as null (nothing was enqueued)");
            }
            texts.add(text);
        }
        return texts;
    }

    /**
     * Reads a claimed job's payload, in its handler.
     *
     * @param job the job
     * @return its payload
     * @throws UnreadablePayload if the codec throws for the job's text, or returns null: the
     *     codec's error is its cause and is in its message, which the dead letter keeps
     * @throws InterruptedException if the codec threw it (the attempt's timeout or the pool's
     *     cancellation interrupted it): that is the attempt's fate, not the payload's. A codec that
     *     wraps its interrupt in another exception is read as unreadable
     */
    default P read(Job job) throws UnreadablePayload, InterruptedException {
        P payload;
        try {
            payload = decode(job.payload());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new UnreadablePayload(job, e);
        }
        if (payload == null) {
            throw new UnreadablePayload(job, new NullPointerException("the codec read null"));
        }
        return payload;
    }
}
