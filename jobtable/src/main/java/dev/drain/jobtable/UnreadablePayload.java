package dev.drain.jobtable;

import dev.drain.safe.SafeText;

/**
 * A claimed job's payload that its {@link PayloadCodec} cannot read (JT-15): thrown by
 * {@link PayloadCodec#read(Job)} in the job's handler, so that the item fails like any handler's
 * exception and is dead-lettered with the codec's error, which is this exception's cause and is in
 * its message. It is not one of the pool's retryable types unless the pool retries every
 * {@code Exception}: reading the same text again gives the same error.
 */
public final class UnreadablePayload extends Exception {
    private static final long serialVersionUID = 1L;

    /** The job's id: a long, so that the exception holds no payload. */
    private final long jobId;

    UnreadablePayload(Job job, Throwable cause) {
        super(job + ": the payload cannot be read: " + SafeText.of(cause), cause);
        this.jobId = job.id();
    }

    /** {@return the id of the job whose payload could not be read} */
    public long jobId() {
        return jobId;
    }
}
