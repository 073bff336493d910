import Foundation
import Testing

@testable import RxVault

/// The pruning policy (restic's forget semantics) on synthetic calendars, and backup names.
@Suite struct BackupPolicyTests {
    static func t(_ iso: String) -> BackupTime { BackupTime(iso: iso)! }

    /// One backup a day at 02:00 UTC from 2025-01-01 to 2026-03-15, and a second one at 14:00
    /// on the last day.
    static func calendar() -> [BackupTime] {
        var times: [BackupTime] = []
        var date = t("2025-01-01T02:00:00Z").date
        let end = t("2026-03-15T02:00:00Z").date
        while date <= end {
            times.append(BackupTime(date))
            date = date.addingTimeInterval(86_400)
        }
        times.append(t("2026-03-15T14:00:00Z"))
        return times
    }

    func kept(_ decisions: [BackupPolicy.Decision<BackupTime>]) -> [String: [BackupPolicy.Period]] {
        Dictionary(uniqueKeysWithValues: decisions.filter(\.keep).map { ($0.time.iso, $0.periods) })
    }

    @Test func eachKeptBackupStandsForTheNewestOfItsPeriod() {
        let times = Self.calendar()
        #expect(times.count == 440)
        let policy = BackupPolicy(daily: 7, weekly: 4, monthly: 6, yearly: 2)
        // Shuffled input: the result depends on the times only.
        let decisions = policy.apply(times.shuffled(), time: { $0 })
        #expect(decisions.map(\.time) == times.sorted(by: >), "newest first")
        let expected: [String: [BackupPolicy.Period]] = [
            // The newest: it stands for its day, week (2026-W11, Mon 9 to Sun 15 March), month and year.
            "2026-03-15T14:00:00Z": [.daily, .weekly, .monthly, .yearly],
            // Six more days, newest first; the 02:00 backup of the 15th is not its day's newest.
            "2026-03-14T02:00:00Z": [.daily], "2026-03-13T02:00:00Z": [.daily], "2026-03-12T02:00:00Z": [.daily],
            "2026-03-11T02:00:00Z": [.daily], "2026-03-10T02:00:00Z": [.daily], "2026-03-09T02:00:00Z": [.daily],
            // Three more ISO weeks: each one's newest backup is its Sunday.
            "2026-03-08T02:00:00Z": [.weekly], "2026-03-01T02:00:00Z": [.weekly], "2026-02-22T02:00:00Z": [.weekly],
            // Five more months: each one's last day.
            "2026-02-28T02:00:00Z": [.monthly], "2026-01-31T02:00:00Z": [.monthly],
            "2025-12-31T02:00:00Z": [.monthly, .yearly], "2025-11-30T02:00:00Z": [.monthly],
            "2025-10-31T02:00:00Z": [.monthly]
        ]
        #expect(kept(decisions) == expected)
        #expect(decisions.filter { !$0.keep }.count == 440 - 15)
        #expect(!decisions.contains { $0.time == Self.t("2026-03-15T02:00:00Z") && $0.keep })
    }

    @Test func theOldestIsKeptWhileAKindHasCountsLeft() {
        // restic >= 0.15: with counts left, the oldest backup stays, so history reaches back.
        let times = [Self.t("2025-03-01T10:00:00Z"), Self.t("2025-07-01T10:00:00Z"), Self.t("2025-07-20T10:00:00Z")]
        let yearly = kept(BackupPolicy(yearly: 5).apply(times, time: { $0 }))
        #expect(yearly == ["2025-07-20T10:00:00Z": [.yearly], "2025-03-01T10:00:00Z": [.yearly]])
        // With the count used up before it, the oldest goes.
        let one = kept(BackupPolicy(yearly: 1).apply(times, time: { $0 }))
        #expect(one == ["2025-07-20T10:00:00Z": [.yearly]])
        let monthly = kept(BackupPolicy(monthly: 2).apply(times, time: { $0 }))
        #expect(monthly == ["2025-07-20T10:00:00Z": [.monthly], "2025-03-01T10:00:00Z": [.monthly]])
    }

    @Test func weeksAreISOWeeksAcrossTheNewYear() {
        // 2026-01-01 is a Thursday: 29 Dec 2025 to 4 Jan 2026 is 2026-W01; Sunday 28 Dec is 2025-W52.
        #expect(Self.t("2025-12-29T00:00:00Z").isoWeek == (2026, 1))
        #expect(Self.t("2025-12-28T23:59:59Z").isoWeek == (2025, 52))
        #expect(Self.t("2027-01-01T00:00:00Z").isoWeek == (2026, 53))
        let times = [Self.t("2025-12-28T09:00:00Z"), Self.t("2025-12-29T09:00:00Z"), Self.t("2026-01-01T09:00:00Z")]
        #expect(
            kept(BackupPolicy(weekly: 2).apply(times, time: { $0 }))
                == ["2026-01-01T09:00:00Z": [.weekly], "2025-12-28T09:00:00Z": [.weekly]])
        // Days are UTC days: 23:59:59 and 00:00:00 are two days.
        let midnight = [Self.t("2026-05-01T23:59:59Z"), Self.t("2026-05-02T00:00:00Z"), Self.t("2026-05-02T08:00:00Z")]
        #expect(
            kept(BackupPolicy(daily: 2).apply(midnight, time: { $0 }))
                == ["2026-05-02T08:00:00Z": [.daily], "2026-05-01T23:59:59Z": [.daily]])
    }

    @Test func backupsInTheSameSecondAreOrderedByTheirSequence() {
        let time = Self.t("2026-05-02T08:00:00Z")
        let names = [
            BackupName(vaultID: "00ff00ff00ff00ff00ff00ff00ff00ff", time: time, sequence: 1),
            BackupName(vaultID: "00ff00ff00ff00ff00ff00ff00ff00ff", time: time, sequence: 3),
            BackupName(vaultID: "00ff00ff00ff00ff00ff00ff00ff00ff", time: time, sequence: 2)
        ]
        let decisions = BackupPolicy(daily: 1).apply(names, time: \.time, tieBreak: \.sequence)
        #expect(decisions.map(\.item.sequence) == [3, 2, 1])
        #expect(decisions.map(\.keep) == [true, false, false])
        #expect(BackupPolicy().isEmpty && !BackupPolicy(weekly: 1).isEmpty && BackupPolicy(daily: 0).isEmpty)
    }

    @Test func namesSayWhichVaultAndWhenAndSortByTime() {
        let id = "3F9A2C1E0000111122223333444455556"
        let name = BackupName(vaultID: id, time: Self.t("2026-11-22T22:15:30Z"))
        #expect(name.description == "rxvault-3f9a2c1e-20261122T221530Z.age")
        #expect(BackupName(parsing: name.description) == name)
        #expect(name.names(vaultID: id) && !name.names(vaultID: "3f9a2c1f00"))
        let second = BackupName(vaultID: id, time: name.time, sequence: 2)
        #expect(second.description == "rxvault-3f9a2c1e-20261122T221530Z_2.age")
        #expect(BackupName(parsing: second.description) == second)
        // Byte order of the names is the order they were made in.
        let later = BackupName(vaultID: id, time: Self.t("2026-11-22T22:15:31Z"))
        #expect([later, second, name].map(\.description).sorted() == [name, second, later].map(\.description))
        for bad in [
            "rxvault-3F9A2C1E-20261122T221530Z.age", "rxvault-3f9a2c1-20261122T221530Z.age",
            "rxvault-3f9a2c1e-20261122T2215Z.age",
            "rxvault-3f9a2c1e-20261122T221530Z_1.age", "rxvault-3f9a2c1e-20261122T221530Z_02.age",
            "rxvault-3f9a2c1e-20260230T221530Z.age",
            "rxvault-3f9a2c1e-20261122T241530Z.age", "rxvault-3f9a2c1e-20261122T221530Z.age.tmp",
            "rxvault-3f9a2c1e-20261122T221530Z-2.age",
            ".rxvault-3f9a2c1e-20261122T221530Z.age.rxvault-1a2b", "notes.txt",
            "rxvault-3f9a2c1e-x-20261122T221530Z.age"
        ] {
            #expect(BackupName(parsing: bad) == nil, "\(bad)")
        }
        let label = BackupLabel(vaultID: id.prefix(32).description, time: name.time, snapshotBytes: 131_072)
        #expect(BackupLabel(type: "rxvault-backup", arguments: label.arguments) == label)
        // Two full chunks: nonce, 128 KiB and two tags.
        #expect(label.payloadLength == 16 + 131_072 + 32)
        #expect(BackupLabel(vaultID: id, time: name.time, snapshotBytes: 0).payloadLength == 32)
        #expect(BackupLabel(vaultID: id, time: name.time, snapshotBytes: 65_537).payloadLength == 16 + 65_537 + 32)
        for bad in [
            ["v2", String(repeating: "0", count: 32), "20261122T221530Z", "1"],
            ["v1", String(repeating: "0", count: 32), "20261122T221530Z"],
            ["v1", String(repeating: "0", count: 32), "20261122T221530Z", "01"],
            ["v1", String(repeating: "0", count: 31), "20261122T221530Z", "1"]
        ] {
            #expect(BackupLabel(type: "rxvault-backup", arguments: bad) == nil, "\(bad)")
        }
    }
}
