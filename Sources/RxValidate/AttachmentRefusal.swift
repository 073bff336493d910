/// Why a file was not accepted as an attachment. `description` says what the file was found to
/// be and why it was refused, in the words the CLI prints.
public struct AttachmentRefusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Reason: String, Sendable, Codable {
        case notPNGOrPDF = "not-png-or-pdf"
        case tooLarge = "too-large"
        case corrupt
        case limit
        case encrypted
        case activeContent = "active-content"
        /// A PDF that carries other files (embedded files, file attachment annotations).
        case embeddedFile = "embedded-file"
        case parserFailed = "parser-failed"
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }

    /// What the person can do about it, when there is something (printed as `rxvault: hint:`).
    public var hint: String? {
        switch reason {
        case .corrupt where message.hasPrefix("PDF is damaged"):
            return "to repair it, print it to a new PDF, or run `qpdf in.pdf out.pdf`, and attach the result"
        case .activeContent, .embeddedFile:
            return "to keep only the pages, print it to a new PDF and attach that"
        default:
            return nil
        }
    }
}
