import NIOCore
import NIOEmbedded
import NIOHTTP1
import ReachabilityCore
@testable import ReachConnectivity
import XCTest
import FuzzEntryPoints


/// The probe's HTTP handlers (`ResponseReader.addHandlers`) fed a server's bytes on an
/// `EmbeddedChannel`: what one exchange comes to, and what is kept of a hostile answer.
final class HTTPResponseReaderTests: XCTestCase {
    /// The outcome of one exchange with a server that sends `answer` in `chunk`-byte reads
    /// and then closes the connection (nil: the exchange never ended).
    private func exchange(_ answer: [UInt8], chunk: Int = 4096) throws -> HTTPFetcher.Result? {
        let (request, result) = try ResponseReader.embeddedExchange(answer, chunk: chunk)
        XCTAssertEqual(request?.hasPrefix("GET /generate_204 HTTP/1.1\r\n"), true)
        return result
    }

    private func response(_ result: HTTPFetcher.Result?, file: StaticString = #filePath, line: UInt = #line) -> ProbeResponse? {
        guard case let .response(response)? = result?.outcome else {
            XCTFail("no response: \(String(describing: result?.outcome))", file: file, line: line)
            return nil
        }
        return response
    }

    func testPlainAnswers() throws {
        let noContent = response(try exchange(Array("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n".utf8), chunk: 1))
        XCTAssertEqual(noContent?.status, 204)
        let redirect = response(try exchange(Array("HTTP/1.1 302 Found\r\nLocation: http://portal.test/login\r\nContent-Length: 0\r\n\r\n".utf8)))
        XCTAssertEqual(redirect?.location, "http://portal.test/login")
        let page = try exchange(Array("HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n<html>hi</html>".utf8), chunk: 3)
        XCTAssertEqual(response(page)?.bodyLength, 11)
        XCTAssertEqual(page?.body, Array("<html>hi</h".utf8))
    }

    /// A server sending `100 Continue` forever. NIO's decoder used to drop
    /// every one of them and the exchange ran until the probe's deadline; now a few end it.
    func testEndlessInformationalAnswersFail() throws {
        let forever = Array(String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 1000).utf8)
        let result = try exchange(forever, chunk: 64)
        XCTAssertEqual(result?.outcome, .failed("more than 4 informational (1xx) answers"))

        let five = Array((String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 5) + "HTTP/1.1 204 No Content\r\n\r\n").utf8)
        XCTAssertEqual(try exchange(five)?.outcome, .failed("more than 4 informational (1xx) answers"))

        // A few are HTTP: the answer after them counts.
        let four = Array((String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 3)
            + "HTTP/1.1 103 Early Hints\r\nLink: </style.css>\r\n\r\nHTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n").utf8)
        XCTAssertEqual(response(try exchange(four))?.status, 204)
    }

    /// What is kept of the headers is bounded; a Location too long to be a URI is dropped.
    func testHeadersAreBounded() throws {
        let long = "http://portal.test/" + String(repeating: "a", count: 3000)
        let tooLong = response(try exchange(Array("HTTP/1.1 302 Found\r\nLocation: \(long)\r\nContent-Length: 0\r\n\r\n".utf8)))
        XCTAssertEqual(tooLong?.status, 302)
        XCTAssertNil(tooLong?.location)
        let longest = "http://portal.test/" + String(repeating: "a", count: WebURI.maximumLength - 19)
        XCTAssertEqual(response(try exchange(Array("HTTP/1.1 302 Found\r\nLocation: \(longest)\r\n\r\n".utf8)))?.location, longest)

        let many = (0..<200).map { "X-Header-\($0): v\r\n" }.joined()
        let crowded = response(try exchange(Array("HTTP/1.1 204 No Content\r\n\(many)Location: http://late.test/\r\n\r\n".utf8)))
        XCTAssertEqual(crowded?.headers.count, ResponseReader.maximumHeaders)
        XCTAssertNil(crowded?.location, "a header past the first 64 is not read")
    }

    /// A hostile Location is read as it came; `ProbeVerdict` refuses it as a login page.
    /// (C0 controls such as ESC never get this far: NIO's parser refuses the answer.)
    func testHostileLocationIsNoLoginPage() throws {
        let c1AndOverride: [UInt8] = [0xC2, 0x9B, 0x33, 0x31, 0x6D, 0xE2, 0x80, 0xAE]  // CSI "31m", U+202E
        let hostile = Array("HTTP/1.1 302 Found\r\nLocation: http://portal.test/".utf8) + c1AndOverride + Array("\r\nContent-Length: 0\r\n\r\n".utf8)
        let result = try exchange(hostile)
        XCTAssertEqual(response(result)?.location, "http://portal.test/\u{9B}31m\u{202E}")
        let judgement = ProbeVerdict.judge(http: result?.outcome, https: nil, expect: ProbeExpectation())
        XCTAssertEqual(judgement.connectivity, .portal)
        XCTAssertNil(judgement.portalURL)

        let escape = Array("HTTP/1.1 302 Found\r\nLocation: http://portal.test/".utf8) + [0x1B, 0x5D, 0x30, 0x3B, 0x78, 0x07] + Array("\r\n\r\n".utf8)
        guard case .failed? = try exchange(escape)?.outcome else { return XCTFail("NIO refuses a control character in a header") }
    }

    func testGarbageFails() throws {
        guard case .failed? = try exchange(Array("SSH-2.0-OpenSSH_9.6\r\n".utf8))?.outcome else { return XCTFail("not HTTP") }
        guard case .failed? = try exchange([])?.outcome else { return XCTFail("closed without an answer") }
    }
}
