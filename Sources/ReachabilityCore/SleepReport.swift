/// How a sleep's length is said in the journal: `7h12m`, `3m05s`, `42s`. Pure.
package enum SleepReport {
    /// `asleep` in hours and minutes, minutes and seconds, or seconds.
    package static func duration(_ asleep: Duration) -> String {
        let seconds = max(0, asleep.components.seconds)
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        if hours > 0 { return "\(hours)h\(minutes < 10 ? "0" : "")\(minutes)m" }
        if minutes > 0 { return "\(minutes)m\(rest < 10 ? "0" : "")\(rest)s" }
        return "\(rest)s"
    }
}
