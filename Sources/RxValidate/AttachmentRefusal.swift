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
        case parserFailed = "parser-failed"
    }

    public let reason: Reason
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
