import ArgumentParser
import RxModel
import RxVault

extension RxVaultCommand {
    struct Due: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "due",
            abstract: "List the prescriptions coming due, and so the eye exams to book.",
            discussion: flowing(
                """
                For each patient and kind, the prescription in use (not withdrawn, not superseded
                by a newer one) whose expiry date is within the window or already past, soonest
                first. Renewing a prescription means an eye exam: each row says whether it is due
                or overdue. A prescription without an expiry date comes due by the one assumed for
                it (an import's --assume-expiry, else 'rxvault config set assumed-validity
                glasses=2y'), shown as 'no expiry written (assumed to DATE)'; with none assumed it
                is never due.

                Exits 0 when something is due and 3 when nothing is, so cron can test it.
                --format ics writes an iCalendar file (an all-day event per prescription, on its
                expiry date) for a calendar app to subscribe to; it holds patients' names in
                plain text. Each event carries a reminder (a VALARM) --alarm before the day: 30
                days unless told (e.g. --alarm 2w), none with --alarm none.

                Examples:
                  rxvault due
                  rxvault due --within 90d --format json
                  rxvault due --format ics > ~/recalls.ics
                  rxvault due --format ics --alarm 14d > ~/recalls.ics
                """))

        @Option(
            help: ArgumentHelp(
                "Expiring within this many days from today, or already expired (e.g. 60d, 8w, 3m).", valueName: "days"))
        var within: String = "\(PrescriptionStatus.defaultWarningDays)d"
        @Option(help: "Output format (ics: iCalendar, RFC 5545).") var format: Format = .table
        @Option(
            help: ArgumentHelp(
                "With --format ics: a reminder this long before each event (e.g. 30d, 2w), or none.",
                valueName: "days|none"))
        var alarm: String = "\(Self.defaultAlarmDays)d"
        @Flag(
            help:
                "One line per row, however narrow the terminal (otherwise columns that do not fit go on lines beneath each row)."
        )
        var wide = false
        @OptionGroup var options: VaultOptions

        enum Format: String, ExpressibleByArgument, CaseIterable { case table, json, ics }

        /// The calendar's reminder unless told: a month is time to book an exam.
        static let defaultAlarmDays = 30

        /// `--alarm`: days before the event, nil for none.
        func alarmDays() throws -> Int? {
            if alarm.lowercased() == "none" { return nil }
            guard let days = Duration.days(alarm) else {
                throw CLIError(
                    .invalidInput, "--alarm '\(alarm)': give a number of days such as 30d, 2w or 1m, or none")
            }
            return days
        }

        func run() throws {
            var nothingDue = false
            try CommandRunner.run(json: format == .json) {
                guard let days = Duration.days(within) else {
                    throw CLIError(.invalidInput, "--within '\(within)': give a number of days such as 60d, 8w or 2m")
                }
                let alarmDays = try alarmDays()
                let clock = try Environment.clock()
                let today = clock.today()
                let vault = try options.openReader()
                let validity = try vault.assumedValidity()
                let recalls = Recall.due(try vault.list(), today: today, within: days, assuming: validity)
                warnIfNotLogged(vault)
                nothingDue = recalls.isEmpty
                switch format {
                case .table:
                    if recalls.isEmpty {
                        Terminal.err("rxvault: nothing is due within \(days) days")
                    } else {
                        Terminal.out(RecallOutput.table(recalls, style: .forStandardOutput(wide: wide)))
                    }
                case .json:
                    Terminal.out(RecallOutput.json(recalls, today: today, withinDays: days, assuming: validity))
                // An empty calendar still: a subscription then drops the events that are done.
                case .ics:
                    Terminal.outExactly(RecallOutput.calendar(recalls, stamp: clock.timestamp(), alarmDays: alarmDays))
                }
            }
            // Not an error: the answer "nothing", told apart from "something" for scripts.
            if nothingDue { throw ExitCode(ExitStatus.nothingDue.rawValue) }
        }
    }
}
