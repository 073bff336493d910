import RxStore

extension ClientAccess {
    /// The same client's access with only the grants of `prescriptions` kept: what a server
    /// answers a request with when the grants changed between the request's view and its read
    /// (a grant made since is not this request's; a grant revoked since is absent from `self`).
    public func narrowed(to prescriptions: Set<PrescriptionID>) -> ClientAccess {
        ClientAccess(client: client, grants: grants.filter { prescriptions.contains($0.key) })
    }
}
