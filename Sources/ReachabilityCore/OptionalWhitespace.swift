extension StringProtocol {
    /// The text without leading and trailing spaces and tabs: HTTP's optional whitespace
    /// (RFC 9110 §5.6.3) around a header value or a media type's parameters. Written here
    /// rather than taken from Foundation's `CharacterSet`, which would link all of Foundation
    /// and ICU into reachd.
    package var trimmingOptionalWhitespace: String {
        let isBlank = { (character: Character) in character == " " || character == "\t" }
        guard let first = firstIndex(where: { !isBlank($0) }), let last = lastIndex(where: { !isBlank($0) }) else { return "" }
        return String(self[first...last])
    }
}
