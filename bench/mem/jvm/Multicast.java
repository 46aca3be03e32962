// bench/mem/jvm/Multicast.java: the JVM experiment's program (issue 15; the thesis's section 6.3,
// a Scribe/FreePastry streaming-multicast simulation whose nodes buffer messages).
//
// NODES nodes form a multicast tree (fan-out 3, node i's parent is (i - 1) / 3). The root
// publishes MESSAGES messages of 1 MB; each message travels down the tree, and every node keeps
// its own copy (a new byte[], as a separate machine would) and checksums it, then buffers it in
// a window of its last WINDOW messages, dropping the oldest. The live set is about
// NODES * WINDOW MB (40 MB by default: 20 nodes, a window of 2), and every message allocates
// NODES MB, so the run allocates MESSAGES * NODES MB (20 GB by default) and its speed depends on
// how often the collector has to run, which depends on how much room the heap leaves above the
// live set.
//
// With --adapt it reads antsched memd's notifications on stdin, one line each from
// examples/jvm-bridge ("S FREE_BYTES TIER MONOTONIC_S"), on a daemon thread, and applies the
// thesis's rule for a collected heap: a full collection (System.gc()) when S falls under
// 10 minutes (--gc-below, seconds); while the group is under pressure (S below S_max) the heap
// is held at the size it has (the JVM's SoftMaxHeapSize, set through HotSpotDiagnosticMXBean,
// to the heap committed), and while S is under 10 minutes it is also shrunk by a tenth at each
// notification (the daemon repeats them every second), and in the paging and thrashing tiers
// collected and cut at once to the live set with room to move (garbage is never used again,
// p = 0 in the cost of Eq. 4.3, so once the group pages, collecting it is cheaper than paging
// it whatever S says, by the rule of section 4.3; memd's S can stay above 10 minutes for the
// first seconds of reclaim, while its estimate of the reclaim rate builds up); once S has been
// back at S_max (tier plenty) for --grow-after seconds (5), the soft limit climbs back to -Xmx
// (half the way each second), and the heap may grow again.
// Shenandoah treats the soft limit as advisory: it starts cycles earlier, but an allocation that a
// cycle cannot keep up with expands the heap towards -Xmx (with a 90 MB hog beside it, back to
// about 176 MB within half a second of each collection, and the group thrashed). A runtime whose
// soft limit binds, as the thesis's JVM's did, collects before it grows past it; so while the
// adaptation holds a limit, the program collects before a message whose allocations would take
// the heap past it (the "gate" collections, adapt_gate_gcs).
// SoftMaxHeapSize is honoured by ZGC and Shenandoah in JDK 17 (not G1), so run with
// -XX:+UseShenandoahGC (bench/mem/jvm.sh uses its static heuristic, which starts a cycle when
// less than 10% of the soft maximum is free, so that the heap is used whole, as the thesis's
// collector used it); Shenandoah's System.gc() also uncommits the empty regions at once.
//
// Prints "key value" lines on stdout: every 10 messages a heap line (time, messages, heap used,
// committed and the soft limit, MB), every 100 a progress line, then runtime_s, the
// collections and their time, the largest committed heap, and the adaptation's actions.
//
//   java -XX:+UseShenandoahGC -Xmx192m bench/mem/jvm/Multicast.java [--nodes N] [--window W]
//        [--messages M] [--adapt] [--gc-below S] [--grow-after S]

import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.util.ArrayDeque;

public class Multicast {
    static final int MB = 1 << 20;

    static int nodes = 20, window = 2, messages = 1000;
    static boolean adapt = false;
    static double gcBelow = 600;

    static volatile long maxCommitted = 0;
    static volatile int fullGcs = 0, holds = 0, grows = 0, lines = 0, gateGcs = 0;
    static volatile double minS = Double.MAX_VALUE;
    /** The soft heap limit now; when S went back to S_max (-1: it is not there). */
    static volatile long soft = Runtime.getRuntime().maxMemory();
    static volatile double plentySince = -1;
    /** Seconds S must stay at S_max before the heap grows back (--grow-after). */
    static double growAfter = 5;

    /**
     * Growing back, on a daemon thread: once S has been at S_max for --grow-after seconds, the
     * soft limit goes up by half of what is left to -Xmx every second, until it is there. At
     * once would make the heap grow straight back into the pressure its collection just
     * relieved: the collection itself is what brings S back to S_max (the group's free memory
     * goes above tau), so the thesis's "grow when S is S_max again" needs a hold-off here.
     */
    static void grow() {
        HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        long xmx = Runtime.getRuntime().maxMemory();
        while (true) {
            try {
                Thread.sleep(1000);
            } catch (InterruptedException e) {
                return;
            }
            double since = plentySince;
            long now = soft;
            if (since >= 0 && elapsed() - since >= growAfter && now < xmx) {
                long next = Math.min(xmx, now + Math.max((xmx - now) / 2, 8L * MB));
                synchronized (Multicast.class) {
                    if (plentySince < 0 || soft != now) continue;
                    soft = next;
                    hs.setVMOption("SoftMaxHeapSize", Long.toString(next));
                }
                grows++;
                System.out.printf("adapt %.2f S_max for %.1f s: soft max up to %d MB%n", elapsed(), elapsed() - since, next / MB);
            }
        }
    }
    static final long start = System.nanoTime();

    static double elapsed() {
        return (System.nanoTime() - start) / 1e9;
    }

    static MemoryUsage heap() {
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
    }

    /** The live set after the last collection this program asked for (0: none yet). */
    static volatile long lastLive = 0;

    /**
     * System.gc() on a thread of its own, so that the handler keeps reading notifications while
     * a collection runs (one in a paging heap can take seconds); requests made while one runs
     * are folded into one more.
     */
    static final class Collector implements Runnable {
        private boolean pending = false;

        synchronized void request() {
            pending = true;
            notifyAll();
        }

        public void run() {
            while (true) {
                synchronized (this) {
                    while (!pending) {
                        try {
                            wait();
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                    pending = false;
                }
                System.gc();
                fullGcs++;
                lastLive = heap().getUsed();
            }
        }
    }

    static final Collector collector = new Collector();

    /**
     * Before a message (nodes + 1 allocations of 1 MB): a collection if they would take the
     * heap past the soft limit the adaptation holds (see the header: Shenandoah's limit is
     * advisory). Nothing while no limit is held.
     */
    static void gate() {
        long xmx = Runtime.getRuntime().maxMemory();
        long limit = soft;
        if (limit >= xmx) return;
        if (heap().getUsed() + (long) (nodes + 1) * MB > limit) {
            System.gc();
            gateGcs++;
            lastLive = heap().getUsed();
        }
    }

    /** The thesis's handler, on a daemon thread: one call per notification line. */
    static void listen() {
        HotSpotDiagnosticMXBean hs = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        long xmx = Runtime.getRuntime().maxMemory();
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in))) {
            String line;
            while ((line = in.readLine()) != null) {
                String[] w = line.trim().split("\\s+");
                if (w.length < 3) continue;
                double s = Double.parseDouble(w[0]);
                String tier = w[2];
                lines++;
                minS = Math.min(minS, s);
                if (tier.equals("plenty")) {
                    plentySince = elapsed();
                    continue;
                }
                plentySince = -1;
                long before = heap().getCommitted();
                boolean paging = tier.equals("paging") || tier.equals("thrashing");
                // In the paging tiers the group already pages: the garbage goes first, whatever
                // S (see the header). A cut without a collection would only move the soft
                // limit, and before the first collection the heap's use is no live set.
                boolean collect = s < gcBelow || paging;
                if (collect) collector.request();
                // Hold the heap at the size it has (S below S_max: no growth). When S is under
                // 10 minutes, also shrink it by a tenth of its committed size at each
                // notification (the daemon repeats them every second); in the paging and
                // thrashing tiers (free memory gone: the group already pages, tier 4's
                // "drastic measures") cut it to the floor at once. Never below the floor: the
                // live set of the last collection plus a quarter (at least 8 MB) of room.
                long live = lastLive > 0 ? lastLive : heap().getUsed();
                long floor = Math.min(xmx, Math.max(live + Math.max(live / 4, 8L * MB), 16L * MB));
                long target = paging ? floor : collect ? before - before / 10 : before;
                long hold = Math.max(floor, target);
                synchronized (Multicast.class) {
                    if (hold < soft) {
                        soft = hold;
                        hs.setVMOption("SoftMaxHeapSize", Long.toString(soft));
                        holds++;
                    }
                }
                System.out.printf("adapt %.2f S %.1f %s: %s, heap committed %d MB, soft max %d MB%n", elapsed(), s,
                        tier, collect ? "System.gc()" : "hold", before / MB, soft / MB);
            }
        } catch (Exception e) {
            System.out.println("adapt_error " + e);
        }
    }

    public static void main(String[] args) {
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--nodes": nodes = Integer.parseInt(args[++i]); break;
                case "--window": window = Integer.parseInt(args[++i]); break;
                case "--messages": messages = Integer.parseInt(args[++i]); break;
                case "--adapt": adapt = true; break;
                case "--gc-below": gcBelow = Double.parseDouble(args[++i]); break;
                case "--grow-after": growAfter = Double.parseDouble(args[++i]); break;
                default:
                    System.err.println("Multicast: unknown argument " + args[i]);
                    System.exit(2);
            }
        }
        if (adapt) {
            Thread t = new Thread(Multicast::listen, "antsched-severity");
            t.setDaemon(true);
            t.start();
            Thread c = new Thread(collector, "antsched-gc");
            c.setDaemon(true);
            c.start();
            Thread g = new Thread(Multicast::grow, "antsched-grow");
            g.setDaemon(true);
            g.start();
        }
        @SuppressWarnings("unchecked")
        ArrayDeque<byte[]>[] buffers = new ArrayDeque[nodes];
        for (int i = 0; i < nodes; i++) buffers[i] = new ArrayDeque<>();
        byte[][] inbox = new byte[nodes][];
        long checksum = 0;
        System.out.printf("start nodes %d window %d messages %d xmx_mb %d adapt %b%n", nodes, window, messages,
                Runtime.getRuntime().maxMemory() / MB, adapt);
        for (int m = 0; m < messages; m++) {
            if (adapt) gate();
            byte[] msg = new byte[MB];
            for (int k = 0; k < MB; k += 4096) msg[k] = (byte) (m + k);
            inbox[0] = msg;
            // Down the tree in breadth-first order: node i copies what its parent holds.
            for (int i = 0; i < nodes; i++) {
                byte[] got = i == 0 ? inbox[0] : inbox[(i - 1) / 3];
                byte[] mine = new byte[MB];
                System.arraycopy(got, 0, mine, 0, MB);
                long sum = 0;
                for (int k = 0; k < MB; k += 64) sum += mine[k];
                checksum += sum;
                inbox[i] = mine;
                ArrayDeque<byte[]> b = buffers[i];
                b.addLast(mine);
                if (b.size() > window) b.removeFirst();
            }
            long c = heap().getCommitted();
            if (c > maxCommitted) maxCommitted = c;
            if ((m + 1) % 10 == 0) {
                // The heap over time (bench/mem/jvm.sh's heap timeline): used, committed, and
                // the soft limit the adaptation holds (-Xmx when it holds none), MB.
                MemoryUsage h = heap();
                System.out.printf("heap %.2f messages %d used_mb %d committed_mb %d soft_mb %d%n", elapsed(), m + 1,
                        h.getUsed() / MB, h.getCommitted() / MB, soft / MB);
            }
            if ((m + 1) % 100 == 0) {
                MemoryUsage h = heap();
                System.out.printf("progress %.2f messages %d heap_used_mb %d heap_committed_mb %d%n", elapsed(), m + 1,
                        h.getUsed() / MB, h.getCommitted() / MB);
            }
        }
        double runtime = elapsed();
        long gcs = 0, gcMs = 0;
        for (GarbageCollectorMXBean g : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcs += Math.max(0, g.getCollectionCount());
            gcMs += Math.max(0, g.getCollectionTime());
        }
        System.out.printf("runtime_s %.3f%n", runtime);
        System.out.printf("gc_count %d%ngc_time_ms %d%n", gcs, gcMs);
        System.out.printf("max_committed_mb %d%n", maxCommitted / MB);
        System.out.printf("allocated_mb %d%n", (long) messages * (nodes + 1));
        System.out.printf("adapt_lines %d%nadapt_full_gcs %d%nadapt_holds %d%nadapt_grows %d%nadapt_gate_gcs %d%n", lines, fullGcs, holds, grows, gateGcs);
        System.out.printf("adapt_min_s %.1f%n", lines == 0 ? -1.0 : minS);
        System.out.printf("checksum %d%n", checksum);
        System.out.flush();
        System.exit(0);
    }
}
