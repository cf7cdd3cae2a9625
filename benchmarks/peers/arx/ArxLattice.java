/*
 * kerckhoffs benchmark harness: ARX's full-domain lattice search (Flash, the optimal default of
 * ARXConfiguration.create()), timed the way bench_lattice_arx.py times ours.
 *
 * Our own code calling ARX's public API; ARX itself is not part of kerckhoffs and is found on
 * the classpath the benchmark is given (ARX_CLASSPATH). One JVM serves a whole benchmark run so
 * the JIT is warm: it reads one command per line on stdin and answers one line on stdout.
 *
 *   run <memory|file> <csv> <delimiter> <k> <l> <sensitive> <qi>=<hierarchy.csv>[,...]
 *
 * memory: the CSV's rows are split into String[] once, outside the timer (the rows "already in
 *         memory"); inside the timer: Data.create(rows), hierarchies read from their files,
 *         attribute types, the search.
 * file:   inside the timer: Data.create(file) (ARX parses lazily, inside anonymize()),
 *         hierarchies, attribute types, the search.
 * Every column that is neither a quasi-identifier nor the sensitive attribute is declared
 * insensitive. k-anonymity with k; distinct l-diversity of the sensitive attribute when l > 1
 * (else the sensitive attribute is insensitive). Suppression limit 0, as ours (no suppression).
 *
 * Answer: ok <main-thread CPU ns> <process CPU ns> <wall ns> <ARX's own timer ms>
 *         <optimum levels, concatenated, in the order the QIs were given> <nodes checked>
 * or:     error <message>
 */

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.deidentifier.arx.ARXAnonymizer;
import org.deidentifier.arx.ARXConfiguration;
import org.deidentifier.arx.ARXLattice.ARXNode;
import org.deidentifier.arx.ARXResult;
import org.deidentifier.arx.AttributeType;
import org.deidentifier.arx.AttributeType.Hierarchy;
import org.deidentifier.arx.Data;
import org.deidentifier.arx.DataDefinition;
import org.deidentifier.arx.criteria.DistinctLDiversity;
import org.deidentifier.arx.criteria.KAnonymity;

public final class ArxLattice {

    private static final Map<String, List<String[]>> ROWS = new HashMap<>();

    private ArxLattice() {
    }

    /** The file's rows split on the delimiter (the benchmark's files hold no quote character). */
    private static List<String[]> rows(String path, char delimiter) throws Exception {
        String key = path + delimiter;
        List<String[]> cached = ROWS.get(key);
        if (cached != null) {
            return cached;
        }
        List<String[]> rows = new ArrayList<>();
        String sep = java.util.regex.Pattern.quote(String.valueOf(delimiter));
        for (String line : Files.readAllLines(new File(path).toPath(), StandardCharsets.UTF_8)) {
            if (line.indexOf('"') >= 0) {
                throw new IllegalArgumentException(path + ": a quote character; not supported");
            }
            if (!line.isEmpty()) {
                rows.add(line.split(sep, -1));
            }
        }
        ROWS.put(key, rows);
        return rows;
    }

    private static String run(String[] a) throws Exception {
        String mode = a[1];
        String csv = a[2];
        char delimiter = a[3].equals("tab") ? '\t' : a[3].charAt(0);
        int k = Integer.parseInt(a[4]);
        int l = Integer.parseInt(a[5]);
        String sensitive = a[6];
        String[] qis = a[7].split(",");
        List<String[]> inMemory = mode.equals("memory") ? rows(csv, delimiter) : null;
        if (!mode.equals("memory") && !mode.equals("file")) {
            throw new IllegalArgumentException("mode must be memory or file: " + mode);
        }

        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = threads.getCurrentThreadCpuTime();
        long proc0 = os.getProcessCpuTime();
        long wall0 = System.nanoTime();

        Data data = inMemory != null
            ? Data.create(inMemory.iterator())
            : Data.create(new File(csv), StandardCharsets.UTF_8, delimiter);
        DataDefinition definition = data.getDefinition();
        Set<String> named = new HashSet<>();
        List<String> order = new ArrayList<>();
        for (String spec : qis) {
            String[] parts = spec.split("=", 2);
            Hierarchy hierarchy = Hierarchy.create(new File(parts[1]), StandardCharsets.UTF_8, ';');
            definition.setAttributeType(parts[0], hierarchy);
            named.add(parts[0]);
            order.add(parts[0]);
        }
        named.add(sensitive);
        definition.setAttributeType(sensitive,
            l > 1 ? AttributeType.SENSITIVE_ATTRIBUTE : AttributeType.INSENSITIVE_ATTRIBUTE);
        for (int i = 0; i < data.getHandle().getNumColumns(); i++) {
            String column = data.getHandle().getAttributeName(i);
            if (!named.contains(column)) {
                definition.setAttributeType(column, AttributeType.INSENSITIVE_ATTRIBUTE);
            }
        }
        ARXConfiguration config = ARXConfiguration.create();
        config.addPrivacyModel(new KAnonymity(k));
        if (l > 1) {
            config.addPrivacyModel(new DistinctLDiversity(sensitive, l));
        }
        config.setSuppressionLimit(0d);
        ARXResult result = new ARXAnonymizer().anonymize(data, config);

        long wall = System.nanoTime() - wall0;
        long cpu = threads.getCurrentThreadCpuTime() - cpu0;
        long proc = os.getProcessCpuTime() - proc0;

        ARXNode optimum = result.getGlobalOptimum();
        if (optimum == null) {
            return "ok " + cpu + " " + proc + " " + wall + " " + result.getTime() + " none 0";
        }
        // ARX orders a transformation's levels by its own QI order: map them back to ours
        String[] arxOrder = optimum.getQuasiIdentifyingAttributes();
        int[] levels = optimum.getTransformation();
        StringBuilder chosen = new StringBuilder();
        for (String qi : order) {
            for (int i = 0; i < arxOrder.length; i++) {
                if (arxOrder[i].equals(qi)) {
                    chosen.append(levels[i]).append('.');
                }
            }
        }
        int checked = 0;
        for (ARXNode[] level : result.getLattice().getLevels()) {
            for (ARXNode node : level) {
                if (node.isChecked()) {
                    checked++;
                }
            }
        }
        return "ok " + cpu + " " + proc + " " + wall + " " + result.getTime() + " " + chosen
            + " " + checked;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            String[] a = line.split("\t");
            String answer;
            try {
                if (a.length != 8 || !a[0].equals("run")) {
                    throw new IllegalArgumentException("expected 8 tab-separated fields, got " + a.length);
                }
                answer = run(a);
            } catch (Exception e) {
                answer = "error " + e.toString().replace('\n', ' ');
            }
            System.out.println(answer);
            System.out.flush();
        }
    }
}
