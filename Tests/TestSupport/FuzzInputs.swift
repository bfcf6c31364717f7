import Foundation

/// The fuzz targets' inputs kept in the repository, for the regression tests that feed each
/// one to the same entry point `scripts/fuzz` fuzzes: `Fuzz/corpus/TARGET/` (the seeds) and
/// `Fuzz/regressions/TARGET/` (every input a run found crashing, hanging or too slow).
public enum FuzzInputs {
    /// `Fuzz/` in the repository.
    public static let directory = Paths.repository.appendingPathComponent("Fuzz")

    /// Every seed and regression input of `target` (`varlink`, `netlink`, `config`, `network`), as
    /// `corpus/NAME` or `regressions/NAME` and its bytes, in name order.
    ///
    /// - Throws: when the seed directory is missing or empty, so a moved folder cannot turn
    ///   the tests into ones that check nothing. A target without findings has no
    ///   regressions directory.
    public static func inputs(for target: String) throws -> [(name: String, bytes: [UInt8])] {
        var inputs: [(name: String, bytes: [UInt8])] = []
        for kind in ["corpus", "regressions"] {
            let folder = directory.appendingPathComponent(kind).appendingPathComponent(target)
            if kind == "regressions" && !FileManager.default.fileExists(atPath: folder.path) { continue }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { !$0.hasPrefix(".") }.sorted()
            guard !names.isEmpty else { throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: folder.path]) }
            for name in names {
                let data = try Data(contentsOf: folder.appendingPathComponent(name))
                inputs.append(("\(kind)/\(name)", Array(data)))
            }
        }
        return inputs
    }
}
