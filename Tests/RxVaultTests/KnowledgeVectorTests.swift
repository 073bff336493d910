import Testing

@testable import RxVault

/// Knowledge vectors (issue 48): how two states of one vault stand to each other, what each
/// lacks, and one encoding per vector.
@Suite struct KnowledgeVectorTests {
    let a = ReplicaID(bytes: Array(repeating: 1, count: 16))!
    let b = ReplicaID(bytes: Array(repeating: 2, count: 16))!

    @Test func relations() {
        let seen = KnowledgeVector([a: 3, b: 1])
        #expect(seen.relation(to: seen) == .same)
        #expect(KnowledgeVector([a: 4, b: 1]).relation(to: seen) == .later)
        #expect(KnowledgeVector([a: 2, b: 1]).relation(to: seen) == .earlier)
        #expect(KnowledgeVector([a: 2, b: 5]).relation(to: seen) == .forked)
        #expect(KnowledgeVector.empty.relation(to: seen) == .earlier)
        #expect(seen.relation(to: .empty) == .later)
    }

    @Test func lackingAndMerging() {
        let mine = KnowledgeVector([a: 5])
        let theirs = KnowledgeVector([a: 2, b: 3])
        #expect(theirs.lacking(from: mine) == [a: 3...5])
        #expect(mine.lacking(from: theirs) == [b: 1...3])
        let merged = mine.merged(with: theirs)
        #expect(merged == KnowledgeVector([a: 5, b: 3]))
        #expect(merged.includes(mine) && merged.includes(theirs))
        #expect(merged.total == 8)
        var advanced = mine
        #expect(advanced.advance(b) == 1 && advanced[b] == 1)
        // A zero clock is no entry at all: one vector, one encoding.
        #expect(KnowledgeVector([a: 0]) == .empty)
    }

    @Test func encodingIsCanonicalAndStrict() throws {
        let vector = KnowledgeVector([b: 7, a: 1 << 40])
        let bytes = vector.encoded()
        #expect(bytes.count == 2 + 2 * 24)
        let (decoded, used) = try #require(KnowledgeVector.decode(bytes))
        #expect(decoded == vector && used == bytes.count)
        #expect(KnowledgeVector.decode(Array(bytes.dropLast())) == nil)
        // Replicas out of order, or a zero clock, are not an encoding rxvault writes.
        let swapped = [bytes[0], bytes[1]] + Array(bytes[26..<50]) + Array(bytes[2..<26])
        #expect(KnowledgeVector.decode(swapped) == nil)
        var zero = KnowledgeVector([a: 1]).encoded()
        zero[zero.count - 1] = 0
        #expect(KnowledgeVector.decode(zero) == nil)
        #expect(KnowledgeVector.decode(KnowledgeVector.empty.encoded())?.0 == .empty)
    }

    @Test func deviceKnowledgeReadsWhatItWrites() throws {
        var known = DeviceKnowledge(replica: a, seen: KnowledgeVector([a: 3, b: 2]))
        #expect(DeviceKnowledge.parse(known.text()) == known)
        known.remember(.init(replica: a, clock: 2, prescriptions: ["0cce0edf", "a492a9f1"]))
        known.remember(.init(replica: a, clock: 3, prescriptions: []))
        #expect(DeviceKnowledge.parse(known.text()) == known)
        #expect(known.prescriptions(in: [a: 2...3]) == ["0cce0edf", "a492a9f1"])
        #expect(known.prescriptions(in: [b: 1...2]).isEmpty)
        for n in 4...300 { known.remember(.init(replica: a, clock: UInt64(n), prescriptions: [])) }
        #expect(known.written.count == DeviceKnowledge.writtenLimit && known.written.last?.clock == 300)
        known.retire()
        #expect(known.retired == [a] && known.replica != a && known.own == [a, known.replica])
        #expect(DeviceKnowledge.parse(known.text()) == known)
        #expect(DeviceKnowledge.parse("rxvault device knowledge 1\nreplica zz\nretired\nseen 0000\n") == nil)
    }

    @Test func findingsSayWhatIsMissingHere() {
        let history = HistoryFinding(found: KnowledgeVector([b: 4]), seen: KnowledgeVector([a: 2, b: 1]), own: [a])
        #expect(history.relation == .forked)
        #expect(history.missingHere == 2 && history.missingElsewhere == 0 && history.unseenCount == 3)
        #expect(history.missingText == "2 writes made on this computer")
    }
}
