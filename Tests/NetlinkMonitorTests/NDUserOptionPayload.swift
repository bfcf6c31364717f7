import XCTest

extension XCTestCase {
    /// An nduseroptmsg for interface `index` with these raw ND options, as the kernel
    /// forwards an RA's options to RTNLGRP_ND_USEROPT.
    func payload(index: Int32 = 3, icmpType: UInt8 = 134, family: UInt8 = 10, options: [UInt8], declaredLength: Int? = nil) -> [UInt8] {
        let length = UInt16(declaredLength ?? options.count)
        var bytes: [UInt8] = [family, 0] + withUnsafeBytes(of: length) { Array($0) }
        bytes += withUnsafeBytes(of: index) { Array($0) }
        bytes += [icmpType, 0, 0, 0, 0, 0, 0, 0]
        return bytes + options
    }
}
