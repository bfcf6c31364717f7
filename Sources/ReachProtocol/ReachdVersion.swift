/// reachd's version: what `reachd --version`, `reachctl --version` and
/// `org.varlink.service.GetInfo` report. The one place it is written.
public enum ReachdVersion {
    /// The release, as `MAJOR.MINOR.PATCH`.
    public static let string = "0.1.0"
}
