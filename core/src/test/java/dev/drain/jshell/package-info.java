/** The JShell scripts of {@code jshell/}, run as a test. */
@NullMarked
package dev.drain.jshell;

import org.jspecify.annotations.NullMarked;
