import Foundation
import RxCrypto
import RxTestSupport
import Testing

@testable import RxServe

/// `POST /auth/challenge` does the same work for a registered client's recipient and for a
/// stranger's, so its timing does not say who is registered (docs/api.md, "Authentication";
/// issue 50: registered recipients were about 80 us slower, every run).
@Suite struct ChallengeTimingTests {
    /// 1,000 challenges for each, interleaved in a random order so that whatever else loads the
    /// machine falls on both alike, each timed alone through the whole route. They must not
    /// differ beyond noise: a difference counts only when a rank test (Mann-Whitney U) finds it
    /// beyond doubt (|z| > 4: a false alarm about once in 16,000 runs) *and* the medians are
    /// further apart than 10 us and 5% (a few microseconds of cache luck are no oracle; the
    /// leak was 80). The same samples with 80 us added to one side must be found different, or
    /// the measurement is too noisy to prove anything: then 1,000 more of each are taken, up to
    /// 4,000, and a run still that noisy says so and proves nothing (it does not fail).
    @Test func aRegisteredRecipientsChallengeTakesAsLongAsAStrangers() async throws {
        let vault = try ServedVault()
        for n in 0..<12 { try vault.addClient("app-\(n)") }
        let registered = "\(try vault.identity("app-7").recipient)"
        let stranger = "\(try AgeIdentity.generate().recipient)"
        var settings = ServedVault.settings
        settings.maxChallengesPerMinute = .max
        try await vault.serve(settings) { api in
            func timed(_ recipient: String) async throws -> Double {
                let start = ContinuousClock.now
                let answer = try await api.post("/auth/challenge", body: #"{"recipient": "\#(recipient)"}"#)
                let elapsed = ContinuousClock.now - start
                #expect(answer.status == .ok)
                return Double(elapsed.components.attoseconds) / 1e18 + Double(elapsed.components.seconds)
            }
            for _ in 0..<100 {
                _ = try await timed(registered)
                _ = try await timed(stranger)
            }
            var random = SeededGenerator(seed: 50)
            var (client, other) = ([Double](), [Double]())
            var report = ""
            for round in 1...4 {
                for _ in 0..<1000 {
                    if Bool.random(using: &random) {
                        client.append(try await timed(registered))
                        other.append(try await timed(stranger))
                    } else {
                        other.append(try await timed(stranger))
                        client.append(try await timed(registered))
                    }
                }
                let same = TimingComparison(client, other)
                let shifted = TimingComparison(client.map { $0 + 80e-6 }, other)
                report = "\(round * 1000) each: \(same), and with 80 us added: \(shifted)"
                guard shifted.differs else { continue }
                #expect(!same.differs, "the challenge's time tells a client from a stranger: \(report)")
                return
            }
            // Tests running beside this one on a loaded machine can drown 80 us: then this run
            // proves nothing either way, and says so rather than fail.
            print("ChallengeTimingTests: too noisy to see an 80 us gap, nothing proven: \(report)")
        }
    }

    /// The rank test itself, on numbers whose answer is known.
    @Test func theComparisonFindsAShiftAndNothingInNoise() {
        var random = SeededGenerator(seed: 7)
        let a = (0..<1000).map { _ in 300e-6 + Double.random(in: 0..<100e-6, using: &random) }
        let b = (0..<1000).map { _ in 300e-6 + Double.random(in: 0..<100e-6, using: &random) }
        #expect(!TimingComparison(a, b).differs)
        #expect(TimingComparison(a.map { $0 + 20e-6 }, b).differs)
        #expect(abs(TimingComparison(a, a.map { $0 + 1 }).z) > 30)
    }
}

/// Two samples of times compared as issue 50 asks: medians, and the Mann-Whitney U rank test
/// (normal approximation, ties given their mean rank), which a few outliers from a loaded
/// machine cannot sway as they would a mean.
struct TimingComparison: CustomStringConvertible {
    let medians: (Double, Double)
    /// U's standard score: positive when the first sample tends to be the slower.
    let z: Double

    init(_ first: [Double], _ second: [Double]) {
        medians = (Self.median(first), Self.median(second))
        let all = (first.map { ($0, true) } + second.map { ($0, false) }).sorted { $0.0 < $1.0 }
        var rankSum = 0.0
        var start = 0
        while start < all.count {
            var end = start
            while end + 1 < all.count && all[end + 1].0 == all[start].0 { end += 1 }
            let rank = Double(start + end) / 2 + 1
            for k in start...end where all[k].1 { rankSum += rank }
            start = end + 1
        }
        let (n1, n2) = (Double(first.count), Double(second.count))
        let u = rankSum - n1 * (n1 + 1) / 2
        z = (u - n1 * n2 / 2) / (n1 * n2 * (n1 + n2 + 1) / 12).squareRoot()
    }

    /// Beyond noise, and large enough to matter.
    var differs: Bool {
        let gap = abs(medians.0 - medians.1)
        return abs(z) > 4 && gap > 10e-6 && gap > 0.05 * min(medians.0, medians.1)
    }

    var description: String {
        String(format: "medians %.1f us and %.1f us, z %.2f", medians.0 * 1e6, medians.1 * 1e6, z)
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : (sorted[(sorted.count - 1) / 2] + sorted[sorted.count / 2]) / 2
    }
}
