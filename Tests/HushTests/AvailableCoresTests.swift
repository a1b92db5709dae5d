import Foundation
import Hush
import XCTest

/// What `hush eval --jobs` defaults to: the CPUs the process may use and its CPU quota, as Linux
/// writes them.
final class AvailableCoresTests: XCTestCase {
    func testACPUListCountsItsRangesAndSingleCPUs() {
        XCTAssertEqual(AvailableCores.cpuListCount("0"), 1)
        XCTAssertEqual(AvailableCores.cpuListCount("0-1"), 2)
        XCTAssertEqual(AvailableCores.cpuListCount("\t0-3,6,8-9\n"), 7)
        XCTAssertNil(AvailableCores.cpuListCount(""))
        XCTAssertNil(AvailableCores.cpuListCount("3-1"))
        XCTAssertNil(AvailableCores.cpuListCount("a-b"))
    }

    func testAQuotaAllowsItsShareOfThePeriodRoundedUp() {
        XCTAssertEqual(AvailableCores.quotaCores(cpuMax: "200000 100000\n"), 2)
        XCTAssertEqual(AvailableCores.quotaCores(cpuMax: "150000 100000"), 2)
        XCTAssertEqual(AvailableCores.quotaCores(cpuMax: "50000 100000"), 1)
        XCTAssertNil(AvailableCores.quotaCores(cpuMax: "max 100000"))
        XCTAssertNil(AvailableCores.quotaCores(cpuMax: "-1 100000"))
        XCTAssertNil(AvailableCores.quotaCores(cpuMax: ""))
    }

    func testTheCountIsAtLeastOneAndAtMostTheMachinesCPUs() {
        let count = AvailableCores.count()
        XCTAssertGreaterThanOrEqual(count, 1)
        XCTAssertLessThanOrEqual(count, ProcessInfo.processInfo.activeProcessorCount)
    }
}
