import Foundation
import Glibc
import ReachProtocol
import ReachabilityCore
import TestSupport
import XCTest

/// `reachctl dispatch` against the real daemon and real route changes: hooks that record
/// their environment next to the kernel's own view, unsafe hooks skipped, a slow hook
/// during flapping, a hung hook, a restart of reachd.
final class DispatchIntegrationTests: DaemonTestCase {
    private var hooks: String!
    private var records: String!
    private var dispatcher: Process?
    private var dispatcherLog: String!

    override func setUpWithError() throws {
        try super.setUpWithError()
        let base = try temporaryDirectory("reachd-dispatch")
        hooks = base + "/dispatcher.d"
        records = base + "/records"
        dispatcherLog = base + "/dispatch"
        for directory in [hooks!, records!] { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false) }
    }

    override func tearDown() {
        if let dispatcher, dispatcher.isRunning {
            kill(dispatcher.processIdentifier, SIGKILL)
            dispatcher.waitUntilExit()
        }
        // A hung hook the dispatcher did not get to kill (when the test failed) goes too.
        for file in (try? FileManager.default.contentsOfDirectory(atPath: records)) ?? [] where file.hasPrefix("pid-") || file.hasPrefix("child-") {
            if let pid = Int32((try? String(contentsOfFile: records + "/" + file, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") {
                kill(pid, SIGKILL)
            }
        }
        if (testRun?.totalFailureCount ?? 0) > 0 { print("dispatch stdout:\n\(output)\ndispatch stderr:\n\(errors)") }
        super.tearDown()
    }

    /// A hook that writes its whole environment, then the kernel's default routes and its
    /// lookup of an internet address, as it saw them while it ran, to RECORDS/NNNN-NAME.
    private func recordingHook(_ name: String, mode: Int = 0o755, then extra: String = "") throws {
        try hook(name, mode: mode, """
            #!/bin/sh
            n=$(ls "\(records!)" | wc -l)
            f="\(records!)/$(printf %04d "$n")-\(name)"
            { env | LC_ALL=C sort
              echo "KERNEL_DEFAULT=$(ip route show default | tr '\\n' ' ')"
              echo "KERNEL_GET=$(ip route get 198.51.100.1 2>&1 | head -n 1)"
            } > "$f.tmp"
            mv "$f.tmp" "$f"
            \(extra)
            """)
    }

    private func hook(_ name: String, mode: Int = 0o755, _ text: String) throws {
        let path = hooks + "/" + name
        try (text + "\n").write(toFile: path, atomically: false, encoding: .utf8)
        XCTAssertEqual(chmod(path, mode_t(mode)), 0)
    }

    /// Every record so far, in the order the hooks ran: (file name, variables).
    private var recorded: [(name: String, variables: [String: String])] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []).filter { !$0.hasSuffix(".tmp") && $0.first?.isNumber == true }.sorted()
        return names.map { name in
            let text = (try? String(contentsOfFile: records + "/" + name, encoding: .utf8)) ?? ""
            var variables: [String: String] = [:]
            for line in text.split(separator: "\n") {
                guard let equals = line.firstIndex(of: "=") else { continue }
                variables[String(line[..<equals])] = String(line[line.index(after: equals)...])
            }
            return (String(name.drop { $0 != "-" }.dropFirst()), variables)
        }
    }

    private func waitForRecords(_ count: Int, timeout: Duration = .seconds(10)) async throws -> [(name: String, variables: [String: String])] {
        let deadline = ContinuousClock.now + timeout
        while recorded.count < count && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        let all = recorded
        XCTAssertGreaterThanOrEqual(all.count, count, "records: \(all.map(\.name))")
        return all
    }

    private var output: String { (try? String(contentsOfFile: dispatcherLog + ".out", encoding: .utf8)) ?? "" }
    private var errors: String { (try? String(contentsOfFile: dispatcherLog + ".err", encoding: .utf8)) ?? "" }

    /// Starts `reachctl dispatch` in the host namespace (so hooks see its kernel), with a
    /// variable of its own that no hook may inherit.
    private func startDispatcher(socket: String, arguments: [String] = []) throws {
        for suffix in [".out", ".err"] { _ = FileManager.default.createFile(atPath: dispatcherLog + suffix, contents: nil) }
        dispatcher = try Command.launch(
            ["ip", "netns", "exec", topology.host.name, Paths.product("reachctl"), "dispatch", hooks, "--socket", socket] + arguments,
            environment: ["DISPATCHER_SECRET": "inherited"], unset: ["REACHD_SOCKET"],
            stdout: FileHandle(forWritingAtPath: dispatcherLog + ".out"), stderr: FileHandle(forWritingAtPath: dispatcherLog + ".err")
        )
    }

    /// reachd's own answer now.
    private func status(_ daemon: DaemonProcess) throws -> StatusReply {
        let result = try reachctl(["status", "--json", "--socket", daemon.socketPath])
        guard result.status == 0 else { throw CommandFailed(command: "reachctl status --json", status: result.status, stderr: result.stderr) }
        return try JSONDecoder().decode(StatusReply.self, from: Data(result.stdout.utf8))
    }

    func testHooksRecordTheEnvironmentOfRealRouteChanges() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try recordingHook("10-first")
        try recordingHook("20-second")
        try startDispatcher(socket: daemon.socketPath)

        // The state at start, then a deletion and an addition of the default route; each
        // runs both hooks, in name order, with reachd's answer and the kernel agreeing.
        var expectedCount = 2
        for step in ["initial", "delete", "add"] {
            switch step {
            case "delete": try topology.host.ip("route", "del", "default")
            case "add": try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
            default: break
            }
            let all = try await waitForRecords(expectedCount)
            guard all.count >= expectedCount else { return }
            let round = Array(all[(expectedCount - 2)..<expectedCount])
            expectedCount += 2
            let answer = try status(daemon)
            XCTAssertEqual(round.map(\.name), ["10-first", "20-second"], step)
            for (name, variables) in round {
                let context = "\(step) \(name): \(variables)"
                XCTAssertEqual(variables["REACHD_EVENT"], step == "initial" ? "initial" : "change", context)
                XCTAssertEqual(variables["REACHD_SEQUENCE"], "\(answer.sequence)", context)
                XCTAssertEqual(variables["REACHD_INSTANCE"], answer.instance, context)
                XCTAssertEqual(variables["REACHD_STATUS"], answer.path.status.rawValue, context)
                XCTAssertEqual(variables["REACHD_REASON"], answer.path.unsatisfiedReason?.rawValue ?? "", context)
                XCTAssertEqual(variables["REACHD_PRIMARY"], answer.path.primaryInterface ?? "", context)
                XCTAssertEqual(variables["REACHD_PRIMARY_TYPE"], answer.path.primaryInterfaceType?.rawValue ?? "", context)
                XCTAssertEqual(variables["REACHD_GATEWAYS"], answer.path.gateways.joined(separator: ","), context)
                XCTAssertEqual(variables["REACHD_CONNECTIVITY"], answer.path.connectivity.rawValue, context)
                XCTAssertEqual(variables["REACHD_EXPENSIVE"], "no", context)
                XCTAssertEqual(variables["PATH"], "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", context)
                // The kernel, asked by the hook while it ran.
                if step == "delete" {
                    XCTAssertEqual(variables["REACHD_STATUS"], "unsatisfied", context)
                    XCTAssertEqual(variables["REACHD_REASON"], "noRoute", context)
                    XCTAssertEqual(variables["REACHD_CHANGES"]?.split(separator: ",").contains("status"), true, context)
                    XCTAssertEqual(variables["KERNEL_DEFAULT"], "", context)
                    XCTAssertEqual(variables["KERNEL_GET"], "RTNETLINK answers: Network is unreachable", context)
                } else {
                    XCTAssertEqual(variables["REACHD_STATUS"], "satisfied", context)
                    XCTAssertEqual(variables["REACHD_PRIMARY"], "eth0", context)
                    XCTAssertEqual(variables["REACHD_GATEWAYS"], "10.77.0.1", context)
                    XCTAssertEqual(variables["KERNEL_DEFAULT"]?.hasPrefix("default via 10.77.0.1 dev eth0"), true, context)
                    XCTAssertEqual(variables["KERNEL_GET"]?.hasPrefix("198.51.100.1 via 10.77.0.1 dev eth0"), true, context)
                    XCTAssertEqual(variables["REACHD_CHANGES"], step == "initial" ? "" : variables["REACHD_CHANGES"], context)
                }
                // Nothing of the dispatcher's environment but what it sets (and what sh adds).
                let allowed: Set<String> = ["PATH", "PWD", "SHLVL", "_", "OLDPWD", "KERNEL_DEFAULT", "KERNEL_GET"]
                let foreign = variables.keys.filter { !$0.hasPrefix("REACHD_") && !allowed.contains($0) }
                XCTAssertEqual(foreign, [], context)
                XCTAssertNil(variables["DISPATCHER_SECRET"], context)
            }
            if step == "delete", let variables = round.first?.variables {
                print("10-first's environment for the deletion of the default route:")
                for (name, value) in variables.sorted(by: { $0.key < $1.key }) where name.hasPrefix("REACHD_") || name.hasPrefix("KERNEL_") {
                    print("  \(name)=\(value)")
                }
            }
        }
        XCTAssertTrue(output.contains("reachctl dispatch: 10-first exited with status 0 after "), output)
    }

    func testUnsafeHooksAreSkippedWithAWarning() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try recordingHook("10-safe")
        let ran = records + "/ran-"
        try hook("20-world-writable", mode: 0o777, "#!/bin/sh\ntouch \(ran)20")
        try hook("30-not-roots", "#!/bin/sh\ntouch \(ran)30")
        XCTAssertEqual(chown(hooks + "/30-not-roots", 65534, 65534), 0)
        try hook("40-not-executable", mode: 0o644, "#!/bin/sh\ntouch \(ran)40")
        try hook(".hidden", "#!/bin/sh\ntouch \(ran)hidden")
        try hook("50-backup~", "#!/bin/sh\ntouch \(ran)backup")
        XCTAssertEqual(symlink("/dev/null", hooks + "/60-masked"), 0)
        try startDispatcher(socket: daemon.socketPath)
        _ = try await waitForRecords(1)
        try topology.host.ip("route", "del", "default")
        let all = try await waitForRecords(2)
        XCTAssertEqual(all.map(\.name), ["10-safe", "10-safe"])
        XCTAssertEqual(all.last?.variables["REACHD_STATUS"], "unsatisfied")
        let ranFiles = try FileManager.default.contentsOfDirectory(atPath: records).filter { $0.hasPrefix("ran-") }
        XCTAssertEqual(ranFiles, [], "no unsafe or ignored hook ran")
        for warning in [
            "skipping \(hooks!)/20-world-writable: writable by group or others (mode 0777)",
            "skipping \(hooks!)/30-not-roots: owned by uid 65534, not root",
            "skipping \(hooks!)/40-not-executable: not executable by its owner (mode 0644)",
        ] {
            XCTAssertTrue(errors.contains("reachctl dispatch: " + warning), "\(warning) in:\n\(errors)")
        }
        for quiet in [".hidden", "50-backup~", "60-masked"] { XCTAssertFalse(errors.contains(quiet), "\(quiet) ignored silently:\n\(errors)") }
    }

    /// A hook slower than the whole flapping: 100 changes while it runs make one more round
    /// (at most two), and the last one sees the final state.
    func testSlowHookDuringHundredFlapsRunsAtMostTwiceMore() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try recordingHook("10-slow", then: "sleep 1.5")
        try startDispatcher(socket: daemon.socketPath)
        let first = try await waitForRecords(1)
        guard first.count == 1 else { return }
        let before = try status(daemon).sequence
        // 100 changes, one `ip` each (reachd sees them one by one), then a last deletion: the
        // final state is unsatisfied. Five at a time.
        let commands = (0..<100).map { $0.isMultiple(of: 2) ? "ip route del default" : "ip route add default via 10.77.0.1 dev eth0" }
        for chunk in stride(from: 0, to: commands.count, by: 5) {
            try topology.host.exec(["sh", "-c", commands[chunk..<(chunk + 5)].joined(separator: "; ")])
        }
        try topology.host.ip("route", "del", "default")
        let final = try status(daemon)
        let published = final.sequence - before
        print("slow hook: reachd published \(published) changes during the flapping")
        XCTAssertGreaterThanOrEqual(published, 20, "the flapping reached the dispatcher as many changes")
        XCTAssertEqual(final.path.status, .unsatisfied)
        // Wait for the run with the final state, then for longer than a run, for any other.
        let deadline = ContinuousClock.now + .seconds(10)
        while recorded.last?.variables["REACHD_SEQUENCE"] != "\(final.sequence)" && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await Task.sleep(for: .seconds(2))
        let all = recorded
        print("slow hook: ran \(all.count) times, sequences \(all.map { $0.variables["REACHD_SEQUENCE"] ?? "?" })")
        XCTAssertLessThanOrEqual(all.count - 1, 2, "at most twice more: \(all.map(\.variables))")
        XCTAssertGreaterThanOrEqual(all.count - 1, 1)
        let last = all.last?.variables ?? [:]
        XCTAssertEqual(last["REACHD_SEQUENCE"], "\(final.sequence)")
        XCTAssertEqual(last["REACHD_STATUS"], "unsatisfied")
        XCTAssertEqual(last["KERNEL_DEFAULT"], "", "the kernel agreed when the hook ran")
        XCTAssertEqual(last["REACHD_CHANGES"]?.split(separator: ",").contains("status"), true)
    }

    /// A hook that ignores SIGTERM and never ends is killed (with the child it started) at
    /// its timeout; the next hook and the next change still run.
    func testHungHookIsKilledAtItsTimeout() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try hook("10-hang", """
            #!/bin/sh
            trap '' TERM
            echo "$$" > "\(records!)/pid-$REACHD_SEQUENCE"
            sleep 1000 &
            echo "$!" > "\(records!)/child-$REACHD_SEQUENCE"
            echo "hanging on $REACHD_STATUS"
            wait
            """)
        try recordingHook("20-record")
        try startDispatcher(socket: daemon.socketPath, arguments: ["--hook-timeout", "1", "--kill-after", "0.5"])
        let started = ContinuousClock.now
        let initial = try await waitForRecords(1)
        let elapsed = ContinuousClock.now - started
        print("hung hook: the next hook ran \(elapsed) after the dispatcher started")
        XCTAssertGreaterThanOrEqual(elapsed, .seconds(1.5), "the hung hook held its round for its timeout and grace")
        XCTAssertEqual(initial.first?.variables["REACHD_STATUS"], "satisfied")
        try topology.host.ip("route", "del", "default")
        let all = try await waitForRecords(2)
        XCTAssertEqual(all.last?.variables["REACHD_STATUS"], "unsatisfied")
        // Both runs of the hook, and the sleep each started, are gone.
        let pids = try FileManager.default.contentsOfDirectory(atPath: records).filter { $0.hasPrefix("pid-") || $0.hasPrefix("child-") }
        XCTAssertEqual(pids.count, 4, "\(pids)")
        for file in pids {
            let pid = try String(contentsOfFile: records + "/" + file, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
            let state = stat.split(separator: ")").last?.split(separator: " ").first
            XCTAssertTrue(stat.isEmpty || state == "Z", "\(file) \(pid) still runs: \(stat)")
        }
        XCTAssertTrue(output.contains("10-hang: hanging on satisfied"), output)
        XCTAssertTrue(errors.contains("reachctl dispatch: 10-hang still runs at its timeout (1 s): sending SIGTERM"), errors)
        XCTAssertTrue(errors.contains("reachctl dispatch: 10-hang still runs 0.5 s after SIGTERM: sending SIGKILL"), errors)
        XCTAssertTrue(errors.contains("reachctl dispatch: 10-hang killed by signal 9 at its timeout after "), errors)
    }

    /// reachd stops and a new run starts on the same socket: the dispatcher reconnects and
    /// runs the hooks for the state the new run reports, then for its changes.
    func testDispatchSurvivesARestartOfReachd() async throws {
        try topology.configureIPv4()
        let (daemon, _) = try startDaemon()
        try recordingHook("10-record")
        try startDispatcher(socket: daemon.socketPath)
        let initial = try await waitForRecords(1)
        let firstInstance = initial.first?.variables["REACHD_INSTANCE"]
        daemon.terminate()
        try topology.host.ip("route", "del", "default")
        // The dispatcher notices the outage (after one quick retry) and keeps retrying.
        let outage = ContinuousClock.now + .seconds(5)
        while !errors.contains("; retrying") && ContinuousClock.now < outage { try await Task.sleep(for: .milliseconds(20)) }
        XCTAssertTrue(errors.contains(daemon.socketPath) && errors.contains("; retrying"), "the outage was logged: \(errors)")
        let second = try DaemonProcess.started(in: topology.host, socketPath: daemon.socketPath)
        self.daemon = second
        let afterRestart = try await waitForRecords(2)
        let restarted = afterRestart.last?.variables ?? [:]
        XCTAssertEqual(restarted["REACHD_EVENT"], "restarted")
        XCTAssertEqual(restarted["REACHD_STATUS"], "unsatisfied")
        XCTAssertEqual(restarted["KERNEL_DEFAULT"], "")
        XCTAssertNotEqual(restarted["REACHD_INSTANCE"], firstInstance)
        XCTAssertEqual(restarted["REACHD_INSTANCE"], try status(second).instance)
        try topology.host.ip("route", "add", "default", "via", "10.77.0.1", "dev", "eth0")
        let afterChange = try await waitForRecords(3)
        XCTAssertEqual(afterChange.last?.variables["REACHD_EVENT"], "change")
        XCTAssertEqual(afterChange.last?.variables["REACHD_STATUS"], "satisfied")
        XCTAssertEqual(afterChange.last?.variables["REACHD_SEQUENCE"], "\(try status(second).sequence)")
        XCTAssertTrue(dispatcher?.isRunning == true)
        withExtendedLifetime(daemon) {}
    }
}
