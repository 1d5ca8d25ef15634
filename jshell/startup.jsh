import dev.drain.queue.*;
import dev.drain.pool.*;
import java.time.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
