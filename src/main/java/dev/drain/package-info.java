/**
 * drain: graceful and emergency shutdown for concurrent work. The queue is in
 * {@link dev.drain.queue}; this package holds the programs a reader runs first.
 */
@NullMarked
package dev.drain;

import org.jspecify.annotations.NullMarked;
