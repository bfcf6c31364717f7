import XCTest

@testable import ReachSystemd

private let logind = ":1.5"
private let restarted = ":1.9"

/// When reachd holds logind's inhibitor and what it tells the daemon, step by step.
final class LogindSleepTests: XCTestCase {
    private typealias Sleep = LogindSleep

    private enum Step {
        case start
        case answer(Sleep.Question, Sleep.Answer)
        case owner(String?)
        case prepare(Bool, from: String)
        case paused
        case close
    }

    private func run(_ steps: [(name: String, step: Step, actions: [Sleep.Action], held: Int32?)],
                     file: StaticString = #filePath, line: UInt = #line) {
        var sleep = Sleep()
        for (name, step, actions, held) in steps {
            let done: [Sleep.Action]
            switch step {
            case .start: done = sleep.start()
            case let .answer(question, answer): done = sleep.answered(question, with: answer)
            case let .owner(name): done = sleep.ownerChanged(to: name)
            case let .prepare(sleeping, sender): done = sleep.prepareForSleep(sleeping, from: sender)
            case .paused: done = sleep.paused()
            case .close: done = sleep.closed()
            }
            XCTAssertEqual(done, actions, name, file: file, line: line)
            XCTAssertEqual(sleep.inhibitor, held, "\(name): the inhibitor held", file: file, line: line)
        }
    }

    func testSleepAndWake() {
        run([
            ("logind's owner asked at start", .start, [.ask(.owner)], nil),
            ("a second start asks nothing", .start, [], nil),
            ("a PrepareForSleep before the owner is known is ignored", .prepare(true, from: logind), [.ignored(sender: logind)], nil),
            ("logind owns its name: an inhibitor asked of it", .answer(.owner, .owner(logind)), [.ask(.inhibit(owner: logind))], nil),
            ("the inhibitor: held", .answer(.inhibit(owner: logind), .inhibitor(7)), [.inhibited], 7),
            ("a PrepareForSleep(true) from another sender is ignored", .prepare(true, from: ":1.66"), [.ignored(sender: ":1.66")], 7),
            ("a NameOwnerChanged to the same owner changes nothing", .owner(logind), [], 7),
            ("paused while awake keeps the inhibitor", .paused, [], 7),
            ("a PrepareForSleep(false) while awake is nothing", .prepare(false, from: logind), [], 7),
            ("logind: about to sleep", .prepare(true, from: logind), [.sleeping], 7),
            ("a repeat says nothing", .prepare(true, from: logind), [], 7),
            ("a foreign wake is ignored", .prepare(false, from: ":1.66"), [.ignored(sender: ":1.66")], 7),
            ("the daemon paused: the inhibitor released", .paused, [.release(7)], nil),
            ("paused again: nothing", .paused, [], nil),
            ("logind: woke; another inhibitor asked", .prepare(false, from: logind), [.awake, .ask(.inhibit(owner: logind))], nil),
            ("held again", .answer(.inhibit(owner: logind), .inhibitor(8)), [.inhibited], 8),
            ("a second inhibitor, unasked for, released at once", .answer(.inhibit(owner: logind), .inhibitor(9)), [.release(9)], 8),
            ("closed: released", .close, [.release(8)], nil),
            ("nothing after", .prepare(true, from: logind), [.ignored(sender: logind)], nil),
            ("nothing asked after", .owner(restarted), [], nil),
        ])
    }

    func testWokeBeforeTheDaemonPaused() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("", .answer(.owner, .owner(logind)), [.ask(.inhibit(owner: logind))], nil),
            ("", .answer(.inhibit(owner: logind), .inhibitor(7)), [.inhibited], 7),
            ("", .prepare(true, from: logind), [.sleeping], 7),
            ("woke with the inhibitor still held: kept, none asked", .prepare(false, from: logind), [.awake], 7),
            ("a late pause keeps it: the system is awake", .paused, [], 7),
        ])
    }

    func testLateReplies() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("", .answer(.owner, .owner(logind)), [.ask(.inhibit(owner: logind))], nil),
            ("sleep before the inhibitor came", .prepare(true, from: logind), [.sleeping], nil),
            ("paused with none held: nothing to release", .paused, [], nil),
            ("the inhibitor arriving while sleeping is released at once", .answer(.inhibit(owner: logind), .inhibitor(7)), [.release(7)], nil),
            ("woke: asked again", .prepare(false, from: logind), [.awake, .ask(.inhibit(owner: logind))], nil),
            ("an owner answer now is stale", .answer(.owner, .owner(restarted)), [], nil),
            ("logind restarted while asking", .owner(restarted), [.ask(.inhibit(owner: restarted))], nil),
            ("the old logind's inhibitor: released at once", .answer(.inhibit(owner: logind), .inhibitor(8)), [.release(8)], nil),
            ("the old logind's failure: nothing", .answer(.inhibit(owner: logind), .failed("gone")), [], nil),
            ("the new one's: held", .answer(.inhibit(owner: restarted), .inhibitor(9)), [.inhibited], 9),
        ])
    }

    func testLogindAbsentAndRestarting() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("nobody owns the name: nothing asked", .answer(.owner, .owner(nil)), [.absent], nil),
            ("a PrepareForSleep from anyone is ignored", .prepare(true, from: logind), [.ignored(sender: logind)], nil),
            ("still gone: nothing", .owner(nil), [], nil),
            ("logind arrives: inhibit", .owner(logind), [.ask(.inhibit(owner: logind))], nil),
            ("", .answer(.inhibit(owner: logind), .inhibitor(7)), [.inhibited], 7),
            ("logind restarts: the old inhibitor released, the new one asked", .owner(restarted),
             [.release(7), .ask(.inhibit(owner: restarted))], nil),
            ("", .answer(.inhibit(owner: restarted), .inhibitor(8)), [.inhibited], 8),
            ("the old logind's signal is ignored", .prepare(true, from: logind), [.ignored(sender: logind)], 8),
            ("", .prepare(true, from: restarted), [.sleeping], 8),
            ("logind leaves while sleeping: released, the daemon resumes", .owner(""), [.release(8), .awake, .absent], nil),
            ("comes back", .owner(logind), [.ask(.inhibit(owner: logind))], nil),
            ("", .answer(.inhibit(owner: logind), .inhibitor(9)), [.inhibited], 9),
            ("", .prepare(true, from: logind), [.sleeping], 9),
            ("", .paused, [.release(9)], nil),
            ("the watch closes while sleeping: the daemon resumes", .close, [.awake], nil),
        ])
    }

    func testOwnerAnswersAndChangesRacing() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("a NameOwnerChanged before the answer wins", .owner(logind), [.ask(.inhibit(owner: logind))], nil),
            ("the answer after it is older news", .answer(.owner, .owner(nil)), [], nil),
        ])
        run([
            ("", .start, [.ask(.owner)], nil),
            ("logind left before the answer", .owner(nil), [.absent], nil),
            ("", .answer(.owner, .owner(logind)), [], nil),
        ])
        run([
            ("", .start, [.ask(.owner)], nil),
            ("GetNameOwner failed otherwise: taken as absent", .answer(.owner, .failed("timeout")), [.absent], nil),
        ])
    }

    func testARefusalIsSaidOnceAndNotRetried() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("", .answer(.owner, .owner(logind)), [.ask(.inhibit(owner: logind))], nil),
            ("refused: said, not asked again", .answer(.inhibit(owner: logind), .failed("AccessDenied")), [.refused("AccessDenied")], nil),
            ("sleep is still followed", .prepare(true, from: logind), [.sleeping], nil),
            ("", .paused, [], nil),
            ("woke: asked once more", .prepare(false, from: logind), [.awake, .ask(.inhibit(owner: logind))], nil),
            ("refused again: not said again", .answer(.inhibit(owner: logind), .failed("AccessDenied")), [], nil),
            ("a stray failure now is nothing", .answer(.inhibit(owner: logind), .failed("late")), [], nil),
            ("a new logind", .owner(restarted), [.ask(.inhibit(owner: restarted))], nil),
            ("its refusal is said", .answer(.inhibit(owner: restarted), .failed("AccessDenied")), [.refused("AccessDenied")], nil),
            ("closed with nothing held: nothing", .close, [], nil),
        ])
    }

    /// logind's policy says no (no polkit, or no rule for reachd): said once as what it is,
    /// sleep still followed, asked again on each wake without a word.
    func testAPolicyRefusalIsSaidOnceAsSuch() {
        run([
            ("", .start, [.ask(.owner)], nil),
            ("", .answer(.owner, .owner(logind)), [.ask(.inhibit(owner: logind))], nil),
            ("not permitted: said once", .answer(.inhibit(owner: logind), .denied("AccessDenied")), [.notPermitted("AccessDenied")], nil),
            ("sleep is still followed", .prepare(true, from: logind), [.sleeping], nil),
            ("nothing to release", .paused, [], nil),
            ("woke: asked once more", .prepare(false, from: logind), [.awake, .ask(.inhibit(owner: logind))], nil),
            ("denied again: not said again", .answer(.inhibit(owner: logind), .denied("AccessDenied")), [], nil),
            ("a new logind", .owner(restarted), [.ask(.inhibit(owner: restarted))], nil),
            ("it grants one", .answer(.inhibit(owner: restarted), .inhibitor(9)), [.inhibited], 9),
        ])
    }
}
