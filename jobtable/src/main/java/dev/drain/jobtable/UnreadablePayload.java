package dev.drain.jobtable;

import dev.drain.safe.SafeText;

/**
 * A claimed job's payload that its {@link PayloadCodec} cannot read (JT-15): thrown by
 * {@link PayloadCodec#read(Job)} in the job's handler, so that the item fails like any handler's
 * exception and is dead-lettered with the codec's error, which is this exception's cause and is in
 * its message (cut to {@value #MAX_CAUSE} characters). It is not one of the pool's retryable types
 * unless the pool retries every {@code Exception}: reading the same text again gives the same error.
 *
 * <p>The message holds no payload of its own, but the codec's error text may quote one (a JSON
 * library's error often shows the text near the fault): that text is in the dead letter and the
 * pool's log as the codec wrote it. A codec for private payloads should throw errors that do not
 * quote them.
 */
public final class UnreadablePayload extends Exception {
    private static final long serialVersionUID = 1L;

    /** The most characters of the codec's error that the message keeps. */
    static final int MAX_CAUSE = 500;

    /** The job's id (not the job, whose payload the exception would then hold). */
    private final long jobId;

    UnreadablePayload(Job job, Throwable cause) {
        super(job + ": the payload cannot be read: " + SafeText.cut(SafeText.of(cause), MAX_CAUSE), cause);
        this.jobId = job.id();
    }

    /** {@return the id of the job whose payload could not be read} */
    public long jobId() {
        return jobId;
    }
}
