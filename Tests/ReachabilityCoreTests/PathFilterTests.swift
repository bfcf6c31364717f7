import ReachabilityCore
import XCTest

final class PathFilterTests: XCTestCase {
    func testAllows() {
        let cases: [(name: String, filter: PathFilter, allowed: Set<InterfaceType>)] = [
            ("none allows every type", .none, Set(InterfaceType.allCases)),
            ("required wifi", PathFilter(requiredInterfaceType: .wifi), [.wifi]),
            ("required cellular", PathFilter(requiredInterfaceType: .cellular), [.cellular]),
            ("prohibited cellular", PathFilter(prohibitedInterfaceTypes: [.cellular]), [.wifi, .wiredEthernet, .loopback, .other]),
            ("prohibited wifi and other", PathFilter(prohibitedInterfaceTypes: [.wifi, .other]), [.cellular, .wiredEthernet, .loopback]),
            ("required and prohibited the same type", PathFilter(requiredInterfaceType: .wifi, prohibitedInterfaceTypes: [.wifi]), []),
            ("required, prohibited another type", PathFilter(requiredInterfaceType: .wifi, prohibitedInterfaceTypes: [.cellular]), [.wifi]),
        ]
        for c in cases {
            for type in InterfaceType.allCases {
                XCTAssertEqual(c.filter.allows(type), c.allowed.contains(type), "\(c.name): \(type)")
            }
        }
    }

    func testIsUnconstrained() {
        let cases: [(name: String, filter: PathFilter, unconstrained: Bool)] = [
            ("none", .none, true),
            ("default init", PathFilter(), true),
            ("required", PathFilter(requiredInterfaceType: .wiredEthernet), false),
            ("prohibited", PathFilter(prohibitedInterfaceTypes: [.other]), false),
        ]
        for c in cases {
            XCTAssertEqual(c.filter.isUnconstrained, c.unconstrained, c.name)
        }
    }
}
