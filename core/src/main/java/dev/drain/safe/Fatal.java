package dev.drain.safe;

/**
 * Which throwables mean the JVM itself may not be able to go on (decision 0019): a
 * {@link VirtualMachineError} (out of memory, a stack overflow, an internal error). Code that
 * catches everything from a callback to keep a thread alive lets these end what that thread
 * serves, instead of carrying on as if the callback had only failed.
 */
public final class Fatal {
    private Fatal() {}

    /**
     * {@return whether {@code thrown} is a {@link VirtualMachineError}}
     *
     * @param thrown what a call threw
     */
    public static boolean is(Throwable thrown) {
        return thrown instanceof VirtualMachineError;
    }

    /**
     * {@return whether {@code thrown} leaves the calling thread in doubt} A
     * {@link StackOverflowError} does not: it was thrown by the call's own recursion (a deeply
     * nested record, a cycle), and by the time it is caught the stack has unwound; every other
     * {@link VirtualMachineError} does.
     *
     * @param thrown what a call threw
     */
    public static boolean isBeyondTheCall(Throwable thrown) {
        return is(thrown) && !(thrown instanceof StackOverflowError);
    }
}
