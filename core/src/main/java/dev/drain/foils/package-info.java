/**
 * Foils: designs deliberately limited, shown beside the real ones so that what the real ones do
 * can be seen by its absence. A foil is written as carefully as its design allows, and is tested
 * against the real design's clauses it can render, and against the ones it cannot; it is never
 * something to use. Here: {@link dev.drain.foils.ClosingQueue}, a queue closed the way it had to
 * be before Python 3.13, beside {@link dev.drain.queue.ShutdownQueue} ({@code specs/fallback-312.md}).
 *
 * <p>Not part of the library: the module {@code dev.drain} does not export this package and the
 * library jar leaves it out. The tests and the JShell scripts use it from the build's class folder.
 */
@NullMarked
package dev.drain.foils;

import org.jspecify.annotations.NullMarked;
