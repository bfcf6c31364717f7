import Foundation

/// Prometheus' own tools, for checking reachd's metrics: nothing here parses the format
/// by hand.
public enum PrometheusTools {
    /// The samples of `text` as the Prometheus Python client parses them, one per line
    /// (`name{label="value",…} value`, labels sorted), plus `# TYPE name type` lines;
    /// throws when the parser refuses the text.
    public static func samples(_ text: String) throws -> Set<String> {
        let script = Paths.repository.appendingPathComponent("Tests/Fixtures/parse_metrics.py").path
        let result = try withTemporaryFile(text) { try Command.run(["sh", "-c", "python3 \"$0\" < \"$1\"", script, $0]) }
        guard result.status == 0 else { throw CommandFailed(command: "parse_metrics.py", status: result.status, stderr: result.stderr) }
        return Set(result.stdout.split(separator: "\n").map(String.init))
    }

    /// promtool: on PATH, or unpacked by `scripts/bootstrap --test`; nil when neither.
    public static var promtool: String? {
        let unpacked = Paths.repository.appendingPathComponent(".build-tools/promtool/usr/bin/promtool").path
        if FileManager.default.isExecutableFile(atPath: unpacked) { return unpacked }
        return Command.exists("promtool") ? "promtool" : nil
    }

    /// The Prometheus server: on PATH, or unpacked beside promtool by `scripts/bootstrap --test`.
    public static var prometheus: String? {
        let unpacked = Paths.repository.appendingPathComponent(".build-tools/promtool/usr/bin/prometheus").path
        if FileManager.default.isExecutableFile(atPath: unpacked) { return unpacked }
        return Command.exists("prometheus") ? "prometheus" : nil
    }

    /// `promtool check metrics` of `text`: its exit status and what it said.
    public static func check(_ text: String, promtool: String) throws -> (status: Int32, output: String) {
        let result = try withTemporaryFile(text) { try Command.run(["sh", "-c", "\"$0\" check metrics < \"$1\"", promtool, $0]) }
        return (result.status, result.stdout + result.stderr)
    }

    private static func withTemporaryFile<Result>(_ text: String, _ body: (String) throws -> Result) throws -> Result {
        let directory = try Paths.makeTemporaryDirectory("reachd-metrics")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try text.write(toFile: directory + "/metrics.prom", atomically: true, encoding: .utf8)
        return try body(directory + "/metrics.prom")
    }
}
