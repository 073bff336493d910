/// Help discussions are written in the source as readable, hard-wrapped paragraphs, but
/// argument-parser wraps every line again to the terminal's width, which broke them into
/// fragments. `flowing` joins each paragraph back into one line before argument-parser sees it.
///
/// A paragraph is consecutive unindented lines. Blank lines, indented lines (examples, and
/// continuation lines of an example) and lines starting with "- " (list items) keep their own
/// line; an unindented line that ends with ":" ends its paragraph ("Examples:").
func flowing(_ text: String) -> String {
    var out: [String] = []
    var joinable = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
        let prose = !line.isEmpty && !line.hasPrefix(" ")
        if prose, joinable, !line.hasPrefix("- "), let last = out.popLast() {
            out.append(last + " " + line)
        } else {
            out.append(line)
        }
        joinable = prose && !line.hasSuffix(":")
    }
    return out.joined(separator: "\n")
}
