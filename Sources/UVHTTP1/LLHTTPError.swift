import CLLHTTP

/// An error llhttp reported, split the way the parse errors carry it: its errno name for code
/// (`llhttpCode`) and a reason in plain words for people, so neither has to be read out of the
/// other.
package struct LLHTTPError {
    /// The errno's name, "HPE_INVALID_HEADER_TOKEN".
    package let name: String
    /// llhttp's reason with a lower-case first letter, as the parsers' own reasons read; a
    /// generic one when llhttp gave none (its reason is NULL on a parser that never failed).
    package let reason: String

    /// The name and reason of `code`, as `parser` (which failed with it) describes it.
    package init(_ code: llhttp_errno_t, parser: UnsafePointer<llhttp_t>) {
        name = llhttp_errno_name(code).map { String(cString: $0) } ?? "HPE_\(code.rawValue)"
        guard let text = llhttp_get_error_reason(parser).map({ String(cString: $0) }), let first = text.first else {
            reason = "the bytes are not HTTP/1.1 as the parser reads it"
            return
        }
        reason = first.lowercased() + text.dropFirst()
    }
}
