import RxModel

/// An RFC 5545 iCalendar document, as `due --format ics` writes it: a VCALENDAR of all-day
/// VEVENTs. Only what a calendar subscription needs, written by hand (content lines are simple,
/// and the rules that matter are the three below, which calendar apps do enforce):
/// - lines end in CRLF (RFC 5545 3.1);
/// - a line longer than 75 octets is folded: CRLF and one space before the rest, never inside
///   a UTF-8 sequence (3.1: "split a line between characters", counted in octets);
/// - TEXT values escape backslash, semicolon, comma and newline (3.3.11), so a patient's name
///   with a comma stays one value.
struct ICalendar {
    /// One all-day event. `uid` must stay the same from one run to the next for the same
    /// thing, so a subscribed calendar updates the event instead of adding a second one.
    struct Event {
        var uid: String
        var day: CalendarDate
        var summary: String
        var description: String?
        /// A reminder this many days before the day (a VALARM, RFC 5545 3.6.6), or none.
        var alarmDaysBefore: Int? = nil
    }

    var productID: String
    var name: String?
    var events: [Event]

    /// `stamp`: when the document was made (DTSTAMP of each event), an ISO 8601 UTC time
    /// (`2026-11-22T22:15:03Z`).
    func text(stamp: String) -> String {
        let dtstamp = stamp.filter { $0 != "-" && $0 != ":" }
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:" + Self.escaped(productID), "CALSCALE:GREGORIAN"]
        lines.append("METHOD:PUBLISH")
        if let name { lines.append("X-WR-CALNAME:" + Self.escaped(name)) }
        for event in events {
            lines += [
                "BEGIN:VEVENT", "UID:" + Self.escaped(event.uid), "DTSTAMP:" + dtstamp,
                "DTSTART;VALUE=DATE:" + Self.basic(event.day)
            ]
            // The day after; on 9999-12-31 there is none, and a DATE event without DTEND is
            // that one day (RFC 5545 3.6.1): DTEND equal to DTSTART would be invalid.
            if let next = event.day.adding(days: 1) { lines.append("DTEND;VALUE=DATE:" + Self.basic(next)) }
            lines.append("SUMMARY:" + Self.escaped(event.summary))
            if let description = event.description { lines.append("DESCRIPTION:" + Self.escaped(description)) }
            // A reminder, not a busy day.
            lines.append("TRANSP:TRANSPARENT")
            if let days = event.alarmDaysBefore {
                // A display alarm (it needs a DESCRIPTION, 3.6.6), triggered before the start:
                // for an all-day event, before the day's midnight where the calendar is.
                lines += [
                    "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:" + Self.escaped(event.summary),
                    days == 0 ? "TRIGGER:PT0S" : "TRIGGER:-P\(days)D", "END:VALARM"
                ]
            }
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.map(Self.folded).joined(separator: "\r\n") + "\r\n"
    }

    /// `20260302`: the DATE form (RFC 5545 3.3.4).
    static func basic(_ day: CalendarDate) -> String { day.description.filter { $0 != "-" } }

    /// A TEXT value (RFC 5545 3.3.11): `\` `;` `,` escaped, a line break as `\n`, and other
    /// control characters (which TEXT does not allow) left out.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\n": out += "\\n"
            case "\r": continue
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// A content line folded at 75 octets (the first line 75, each continuation a space and 74),
    /// between Unicode scalars: never inside one's UTF-8 bytes. Unfolding joins the pieces back
    /// exactly, so a scalar of a longer grapheme on the next line loses nothing.
    static func folded(_ line: String) -> String {
        var pieces: [String] = []
        var current = ""
        var octets = 0
        for scalar in line.unicodeScalars {
            let size = String(scalar).utf8.count
            if octets + size > (pieces.isEmpty ? 75 : 74) {
                pieces.append(current)
                current = ""
                octets = 0
            }
            current.unicodeScalars.append(scalar)
            octets += size
        }
        pieces.append(current)
        return pieces.joined(separator: "\r\n ")
    }
}
