/** A project that uses drain: it reads the module {@code dev.drain} and nothing else of it. */
module dev.drain.examples.consumer {
    requires dev.drain;
}
