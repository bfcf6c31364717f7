import Foundation
import TestSupport
import XCTest

/// What `import ReachClient` makes public is what docs/client-api.md lists, line for line:
/// the client types and the model they hand out, none of the daemon's decisions (those are
/// `package`). The surface is read from the built modules with `swift-symbolgraph-extract`,
/// so it is what the compiler exports: enum cases, protocol requirements and conformances
/// included. `REACHD_WRITE_CLIENT_API=1` writes the real surface into the document instead,
/// for a change meant to alter it (then read the diff).
final class PublicSurfaceTests: XCTestCase {
    static let document = Paths.repository.appendingPathComponent("docs/client-api.md")

    func testThePublicSurfaceIsTheListedOne() throws {
        let surface = try extractSurface()
        let text = try String(contentsOf: Self.document, encoding: .utf8)
        if ProcessInfo.processInfo.environment["REACHD_WRITE_CLIENT_API"] != nil {
            try ClientSurface.replacingLists(in: text, with: surface).write(to: Self.document, atomically: true, encoding: .utf8)
            return
        }
        let listed = ClientSurface.lists(in: text)
        for (module, lines) in surface.lines {
            let documented = Set(listed[module] ?? [])
            let unlisted = lines.filter { !documented.contains($0) }
            let gone = (listed[module] ?? []).filter { !Set(lines).contains($0) }
            XCTAssertTrue(
                unlisted.isEmpty && gone.isEmpty,
                """
                \(module)'s public surface is not docs/client-api.md's list (\(lines.count) public, \(documented.count) listed). \
                Make a decision of the daemon's `package`, or list what an app is meant to use \
                (REACHD_WRITE_CLIENT_API=1 writes the list).
                public, not listed:\n\(unlisted.map { "  + " + $0 }.joined(separator: "\n"))
                listed, not public:\n\(gone.map { "  - " + $0 }.joined(separator: "\n"))
                """
            )
        }
        let extra = Set(listed.keys).subtracting(surface.lines.keys)
        XCTAssertTrue(extra.isEmpty, "docs/client-api.md lists modules ReachClient does not export: \(extra.sorted())")
    }

    func testEveryPublicSymbolIsDocumented() throws {
        let surface = try extractSurface()
        XCTAssertEqual(surface.undocumented, [], "public symbols without a /// comment")
    }

    /// The example apps build on the public surface alone, as an app outside this package
    /// does (`package` declarations are invisible to it): an app needs nothing that is not listed.
    func testTheExamplesNeedOnlyThePublicSurface() throws {
        try requirePrerequisite(Command.exists("swiftc"), "swiftc is not on PATH")
        let examples = Paths.repository.appendingPathComponent("Examples")
        let apps = try FileManager.default.contentsOfDirectory(atPath: examples.path).sorted()
            .map { examples.appendingPathComponent($0).appendingPathComponent("main.swift") }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
        XCTAssertFalse(apps.isEmpty, "no Examples/*/main.swift")
        for app in apps {
            let result = try Command.run(["swiftc", "-typecheck", app.path] + searchPaths())
            XCTAssertEqual(result.status, 0, "\(app.path) does not build outside the package: \(result.stderr)")
        }
    }

    /// The surface of ReachClient and the modules it re-exports, from the modules this test
    /// bundle was built with.
    private func extractSurface() throws -> ClientSurface {
        let tool = "swift-symbolgraph-extract"
        try requirePrerequisite(Command.exists(tool), "\(tool) (part of every Swift toolchain) is not on PATH")
        let output = try temporaryDirectory("reachd-symbols")
        var modules = ["ReachClient"]
        let sources = Paths.repository.appendingPathComponent("Sources/ReachClient")
        for file in try FileManager.default.contentsOfDirectory(atPath: sources.path) where file.hasSuffix(".swift") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("@_exported import ") {
                modules.append(String(line.dropFirst("@_exported import ".count)))
            }
        }
        for module in modules {
            let result = try Command.run([tool, "-module-name", module, "-minimum-access-level", "public", "-output-dir", output] + searchPaths())
            XCTAssertEqual(result.status, 0, "\(tool) -module-name \(module): \(result.stderr)")
        }
        let graphs = try FileManager.default.contentsOfDirectory(atPath: output).filter { $0.hasSuffix(".symbols.json") }.map {
            try JSONDecoder().decode(SymbolGraph.self, from: Data(contentsOf: URL(fileURLWithPath: output + "/" + $0)))
        }
        return ClientSurface(graphs: graphs, sources: "file://" + Paths.repository.standardized.path + "/Sources/")
    }

    /// Where the compiler finds the built modules and the C modules below them: the build's
    /// `Modules`, the module maps SwiftPM generated for C targets, the `include` directories
    /// of the checked-out packages' C targets, and this package's system-library targets.
    private func searchPaths() throws -> [String] {
        let files = FileManager.default
        let build = Paths.products
        let modules = build.appendingPathComponent("Modules")
        var paths = ["-I", files.fileExists(atPath: modules.path) ? modules.path : build.path]
        for entry in try files.contentsOfDirectory(atPath: build.path) where entry.hasSuffix(".build") {
            let map = build.appendingPathComponent(entry).appendingPathComponent("module.modulemap")
            if files.fileExists(atPath: map.path) { paths += ["-Xcc", "-fmodule-map-file=" + map.path] }
        }
        var scratch = build
        for _ in 0..<3 where !files.fileExists(atPath: scratch.appendingPathComponent("checkouts").path) {
            scratch.deleteLastPathComponent()
        }
        // A C target's map is in its include directory, or one below it (TOMLKit's CTOML).
        let checkouts = scratch.appendingPathComponent("checkouts")
        var candidates: [URL] = []
        for package in (try? files.contentsOfDirectory(atPath: checkouts.path)) ?? [] {
            let targets = checkouts.appendingPathComponent(package).appendingPathComponent("Sources")
            for target in (try? files.contentsOfDirectory(atPath: targets.path)) ?? [] {
                let include = targets.appendingPathComponent(target).appendingPathComponent("include")
                candidates.append(include)
                candidates += ((try? files.contentsOfDirectory(atPath: include.path)) ?? []).map { include.appendingPathComponent($0) }
            }
        }
        let ours = Paths.repository.appendingPathComponent("Sources")
        candidates += try files.contentsOfDirectory(atPath: ours.path).map { ours.appendingPathComponent($0) }
        for directory in candidates where files.fileExists(atPath: directory.appendingPathComponent("module.modulemap").path) {
            paths += ["-I", directory.path]
        }
        return paths
    }
}

/// What `swift-symbolgraph-extract` writes, as far as this test reads it.
struct SymbolGraph: Decodable {
    struct Symbol: Decodable {
        struct Kind: Decodable { var identifier: String }
        struct Identifier: Decodable { var precise: String }
        struct Fragment: Decodable {
            var kind: String
            var spelling: String
        }
        struct Location: Decodable { var uri: String }
        /// Present when the declaration has a `///` comment.
        struct DocComment: Decodable {}

        var kind: Kind
        var identifier: Identifier
        var pathComponents: [String]
        var declarationFragments: [Fragment]?
        var location: Location?
        var docComment: DocComment?
    }

    struct Relationship: Decodable {
        var kind: String
        var source: String
        var target: String
        var targetFallback: String?
    }

    var symbols: [Symbol]
    var relationships: [Relationship]
}

/// The public surface, one line per symbol declared in this package's sources, by module:
/// its declaration with the enclosing type's name in front of the symbol's own (`var
/// Path.status: PathStatus`), a type's conformances after its name. Members a conformance
/// brings (`==`, `hash(into:)`, `allCases`) follow from the conformance and are not listed.
struct ClientSurface {
    /// The lines of each module, sorted by the symbols' paths.
    var lines: [String: [String]] = [:]
    /// The paths of the symbols without a doc comment.
    var undocumented: [String] = []

    /// Protocols every type conforms to without saying so.
    static let implicitProtocols: Set<String> = ["Copyable", "Escapable", "SendableMetatype", "BitwiseCopyable"]

    init(graphs: [SymbolGraph], sources: String) {
        var symbols: [String: SymbolGraph.Symbol] = [:]
        for symbol in graphs.flatMap(\.symbols) { symbols[symbol.identifier.precise] = symbol }
        var conformances: [String: Set<String>] = [:]
        for relation in graphs.flatMap(\.relationships) where relation.kind == "conformsTo" {
            let name = symbols[relation.target]?.pathComponents.joined(separator: ".")
                ?? relation.targetFallback.map { String($0.split(separator: ".").last ?? Substring($0)) } ?? relation.target
            if !Self.implicitProtocols.contains(name) { conformances[relation.source, default: []].insert(name) }
        }
        var entries: [String: [(path: [String], line: String)]] = [:]
        for symbol in symbols.values {
            guard let uri = symbol.location?.uri, uri.hasPrefix(sources) else { continue }
            let module = String(uri.dropFirst(sources.count).prefix { $0 != "/" })
            let line = Self.line(for: symbol, conformances: conformances[symbol.identifier.precise, default: []].sorted())
            entries[module, default: []].append((symbol.pathComponents, line))
            if symbol.docComment == nil { undocumented.append(symbol.pathComponents.joined(separator: ".")) }
        }
        for (module, list) in entries {
            lines[module] = list.sorted { $0.path.lexicographicallyPrecedes($1.path) || ($0.path == $1.path && $0.line < $1.line) }.map(\.line)
        }
        undocumented.sort()
    }

    /// The declaration, the enclosing types' names before the symbol's, conformances after
    /// a type's name (before a `where` clause).
    static func line(for symbol: SymbolGraph.Symbol, conformances: [String]) -> String {
        let fragments = symbol.declarationFragments ?? []
        var spellings = fragments.map(\.spelling)
        let parent = symbol.pathComponents.dropLast().joined(separator: ".")
        if !parent.isEmpty, let name = fragments.firstIndex(where: {
            $0.kind == "identifier" || ($0.kind == "keyword" && ($0.spelling == "init" || $0.spelling == "subscript"))
        }) {
            spellings[name] = parent + "." + spellings[name]
        }
        var text = spellings.joined().split(whereSeparator: \.isNewline).joined(separator: " ")
        if !conformances.isEmpty {
            let list = ": " + conformances.joined(separator: ", ")
            if let clause = text.range(of: " where ") { text.insert(contentsOf: list, at: clause.lowerBound) } else { text += list }
        }
        return text
    }

    /// The listed lines of each module: the ```swift block under each "### `Module`"
    /// heading of the document's "## The list" section.
    static func lists(in document: String) -> [String: [String]] {
        var lists: [String: [String]] = [:]
        var section = false, module: String?, inBlock = false
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("## ") { section = line == "## The list" }
            guard section else { continue }
            if line.hasPrefix("### `"), line.hasSuffix("`") {
                module = String(line.dropFirst("### `".count).dropLast())
            } else if line == "```swift", let name = module, lists[name] == nil {
                lists[name] = []
                inBlock = true
            } else if line == "```" {
                inBlock = false
                module = nil
            } else if inBlock, let name = module {
                lists[name, default: []].append(String(line))
            }
        }
        return lists
    }

    /// The document with each module's block holding `surface`'s lines; a module the list
    /// lacks gets a heading and block at the end of the section.
    static func replacingLists(in document: String, with surface: ClientSurface) -> String {
        var output: [String] = []
        var section = false, module: String?, skipping = false, written: Set<String> = []
        func appendMissing() {
            for name in surface.lines.keys.sorted() where !written.contains(name) {
                output += ["### `\(name)`", "", "```swift"] + surface.lines[name]! + ["```", ""]
                written.insert(name)
            }
        }
        for line in document.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            if line.hasPrefix("## ") {
                if section { appendMissing() }
                section = line == "## The list"
            }
            if skipping {
                if line == "```" { skipping = false; output.append(line) }
                continue
            }
            output.append(line)
            guard section else { continue }
            if line.hasPrefix("### `"), line.hasSuffix("`") {
                module = String(line.dropFirst("### `".count).dropLast())
            } else if line == "```swift", let name = module, let lines = surface.lines[name] {
                output += lines
                written.insert(name)
                skipping = true
                module = nil
            }
        }
        if section {
            if output.last == "" { output.removeLast() }
            appendMissing()
            output.append("")
        }
        return output.joined(separator: "\n")
    }
}
