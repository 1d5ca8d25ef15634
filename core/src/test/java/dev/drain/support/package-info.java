/** What every concurrent test here uses: thread kinds, bounded waits, calls on other threads. */
@NullMarked
package dev.drain.support;

import org.jspecify.annotations.NullMarked;
