package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-15: payloads of the user's type, through a codec at the table's edges: what it writes comes
 * back, what it cannot write is refused before anything is enqueued, and what it cannot read is
 * dead-lettered with its error, once, while the jobs beside it are done. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class PayloadCodecTest extends OnEveryDialect {
    PayloadCodecTest(Dialect dialect) {
        super(dialect);
    }

    /** A payload of the user's: an e-mail to send. */
    record Email(String to, String body) {}

    /** An e-mail as "to\nbody"; text without a newline is not one. */
    static final PayloadCodec<Email> EMAILS = PayloadCodec.of(e -> e.to() + "\n" + e.body(), text -> {
        int newline = text.indexOf('\n');
        if (newline < 0) {
            throw new IllegalArgumentException("no newline after the address");
        }
        return new Email(text.substring(0, newline), text.substring(newline + 1));
    });

    /** JT-15: typed payloads, bytes of every value and records, come back from a claim as they were enqueued. */
    @Test
    void aTypedPayloadComesBackAsItWasEnqueued() throws Exception {
        JobTable t = open(JobTable.on(db));
        byte[] everyByte = new byte[256];
        for (int i = 0; i < everyByte.length; i++) {
            everyByte[i] = (byte) i;
        }
        List<byte[]> blobs = List.of(everyByte, new byte[0], new byte[] {0});
        List<Email> emails = List.of(new Email("ada@example.com", "hello\nsecond line"), new Email("", ""));
        PayloadCodec<byte[]> bytes = PayloadCodec.bytes();
        List<Long> blobIds = t.enqueue(bytes.encodeAll(blobs));
        List<Long> emailIds = t.enqueue(EMAILS.encodeAll(emails));
        Map<Long, Job> claimed = new java.util.HashMap<>();
        claimAll(t).forEach(job -> claimed.put(job.id(), job));
        for (int i = 0; i < blobs.size(); i++) {
            assertThat(bytes.read(Objects.requireNonNull(claimed.get(blobIds.get(i))))).as("blob " + i).isEqualTo(blobs.get(i));
        }
        for (int i = 0; i < emails.size(); i++) {
            assertThat(EMAILS.read(Objects.requireNonNull(claimed.get(emailIds.get(i))))).as("email " + i).isEqualTo(emails.get(i));
        }
        assertThat(PayloadCodec.text().encodeAll(List.of("as it is"))).containsExactly("as it is");
    }

    /** JT-15: a payload the codec cannot write, or writes as null, and a null payload are refused naming their position, with the codec's error, and nothing is enqueued. */
    @Test
    void aPayloadTheCodecCannotWriteIsRefusedAndNothingIsEnqueued() throws Exception {
        JobTable t = open(JobTable.on(db));
        PayloadCodec<Integer> odd = PayloadCodec.of(n -> {
            if (n == 13) {
                throw new IllegalStateException("13 is unlucky");
            }
            return n == 7 ? nullText() : Integer.toString(n);
        }, Integer::valueOf);
        assertThatThrownBy(() -> t.enqueue(odd.encodeAll(List.of(1, 2, 13))))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payload 2 cannot be encoded (nothing was enqueued): java.lang.IllegalStateException: 13 is unlucky")
                .cause().hasMessage("13 is unlucky");
        assertThatThrownBy(() -> t.enqueue(odd.encodeAll(List.of(7)))).hasMessage("payload 0 was encoded as null (nothing was enqueued)");
        List<Integer> withNull = new ArrayList<>(List.of(1));
        withNull.add(null);
        assertThatThrownBy(() -> t.enqueue(odd.encodeAll(withNull))).hasMessage("payload 1 is null (nothing was enqueued)");
        assertThat(t.operations().backlog().unfinished()).isZero();
        assertThat(Rows.all(db, table)).isEmpty();
    }

    @SuppressWarnings("NullAway") // a codec that breaks its contract, on purpose
    private static String nullText() {
        return null;
    }

    /**
     * JT-15, JT-5, WP-23: a service pool meets jobs its codec cannot read (text that is no e-mail,
     * Base64 that is not, a codec that reads null): each ends dead with the codec's error, its
     * handler called once, and the jobs beside them are done; a second run claims none of them
     * again (no crash loop).
     */
    @Test
    void aPayloadTheCodecCannotReadIsDeadLetteredWithItsErrorOnce() throws Exception {
        JobTable t = open(JobTable.on(db).claimBatch(4));
        List<Long> good = new ArrayList<>(t.enqueue(EMAILS.encodeAll(List.of(new Email("a@example.com", "1"), new Email("b@example.com", "2")))));
        long noEmail = t.enqueue(List.of("no newline here")).getFirst();
        good.addAll(t.enqueue(EMAILS.encodeAll(List.of(new Email("c@example.com", "3")))));
        Map<Long, AtomicInteger> calls = new ConcurrentHashMap<>();
        List<Email> sent = Collections.synchronizedList(new ArrayList<>());
        WorkerPool.Builder<Job, Void> service = WorkerPool.<Job>forEach(job -> {
            calls.computeIfAbsent(job.id(), id -> new AtomicInteger()).incrementAndGet();
            sent.add(EMAILS.read(job));
        }).workers(3).settler(t.settler());
        for (int run = 0; run < 2; run++) {
            RunOutcome<Job> outcome;
            try (Stream<Job> claims = t.claims()) {
                outcome = service.build().drain(claims);
            }
            assertThat(outcome).as("run " + run).isInstanceOf(RunOutcome.Completed.class);
            if (run == 0) {
                assertThat(outcome.failures()).singleElement().extracting(ItemFailure::cause)
                        .isInstanceOfSatisfying(UnreadablePayload.class, e -> assertThat(e.jobId()).isEqualTo(noEmail));
            } else {
                assertThat(outcome.failures()).as("the second run").isEmpty();
            }
        }
        assertThat(calls.get(noEmail)).as("the unreadable job's handler calls").hasValue(1);
        assertThat(sent).extracting(Email::to).containsExactlyInAnyOrder("a@example.com", "b@example.com", "c@example.com");
        assertThat(Rows.inState(db, table, "done")).containsExactlyInAnyOrderElementsOf(good);
        StoredJob dead = t.operations().job(noEmail).orElseThrow();
        assertThat(dead.state()).isEqualTo(JobState.DEAD);
        assertThat(dead.claims()).isOne();
        assertThat(dead.lastError()).isEqualTo("after 1 attempts: dev.drain.jobtable.UnreadablePayload: job " + noEmail
                + " (claim 1): the payload cannot be read: java.lang.IllegalArgumentException: no newline after the address");
    }

    /** JT-15: Base64 that is not, a codec that reads null, and one whose error is long (cut in the message) are unreadable payloads, each with its cause; an interrupt of the codec is the attempt's, not the payload's. */
    @Test
    void badTextANullReadAndAnInterruptAreToldApart() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(List.of("not base64!", "anything", "wait"));
        List<Job> jobs = claimAll(t);
        assertThatThrownBy(() -> PayloadCodec.bytes().read(jobs.get(0))).isInstanceOf(UnreadablePayload.class)
                .hasMessageContaining("the payload cannot be read: java.lang.IllegalArgumentException: Illegal base64 character")
                .cause().isInstanceOf(IllegalArgumentException.class);
        PayloadCodec<String> readsNull = PayloadCodec.of(s -> s, s -> nullText());
        assertThatThrownBy(() -> readsNull.read(jobs.get(1))).isInstanceOf(UnreadablePayload.class)
                .hasMessageEndingWith("java.lang.NullPointerException: the codec read null");
        PayloadCodec<String> verbose = PayloadCodec.of(s -> s, s -> {
            throw new IllegalArgumentException("x".repeat(10_000));
        });
        assertThatThrownBy(() -> verbose.read(jobs.get(1))).isInstanceOf(UnreadablePayload.class)
                .satisfies(e -> assertThat(e.getMessage()).as("the message, the codec's error cut").hasSizeLessThan(600));
        PayloadCodec<String> interrupted = PayloadCodec.of(s -> s, s -> {
            throw new InterruptedException("the attempt's timeout");
        });
        assertThatThrownBy(() -> interrupted.read(jobs.get(2))).isInstanceOf(InterruptedException.class)
                .hasMessage("the attempt's timeout");
        t.settler().settle(jobs.stream().<dev.drain.pool.Settlement<Job>>map(dev.drain.pool.Settlement.Succeeded::new).toList());
    }
}
