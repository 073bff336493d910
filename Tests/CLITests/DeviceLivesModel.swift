import Foundation

/// What three devices of one vault should hold, kept by the test as a set of events (every
/// owner write a device made, with what that device knew when it made it) and, per device,
/// the events it has merged. What a device should show follows from its events alone, by the
/// merge rules of docs/format.md read as a user reads them:
///
/// - nothing written is lost: a prescription added, a note written, an attachment attached, a
///   measurement taken are there unless a removal of it is among the device's events;
/// - a revocation is never undone: a grant reads while a grant event for it is known whose row
///   no known revoke had seen (a revoke ends every grant row of that client and prescription
///   the revoking device knew; a grant made with no row alive on its device starts a new row);
///   a client removed on any device reads nothing anywhere that knows it; a prescription
///   removed on one device and edited on another stays, without the grants the removal saw.
final class DeviceLivesModel {
    enum Kind: Equatable {
        case add(String)
        case edit(String, note: String)
        case remove(String)
        case attach(String, attachment: String)
        case detach(String, attachment: String)
        case clientAdd(String)
        case clientRemove(String)
        /// A grant that found no row alive on its device makes one (`row` is its own event).
        case grant(client: String, prescription: String, newRow: Bool)
        case revoke(client: String, prescription: String)
        case measurementAdd(String)
        case measurementRemove(String)
        /// A write the model keeps no rule for (a rename, a status, a key, a setting).
        case other(String)
    }

    struct Event {
        let id: Int
        let device: Int
        let kind: Kind
        /// The events its device had when it made it (its causal past, itself excluded).
        let past: Set<Int>
    }

    var events: [Event] = []
    /// Per device, the events it holds.
    var known: [Set<Int>]
    /// The events the folder remote holds (every device that synced through it pushed all it had).
    var remote: Set<Int> = []
    /// Client name -> its identity file.
    var identities: [String: String] = [:]

    init(devices: Int) { known = Array(repeating: [], count: devices) }

    @discardableResult
    func record(_ kind: Kind, on device: Int) -> Event {
        let event = Event(id: events.count, device: device, kind: kind, past: known[device])
        events.append(event)
        known[device].insert(event.id)
        return event
    }

    func events(of device: Int) -> [Event] { known[device].sorted().map { events[$0] } }

    // MARK: What a device should show

    func added(on device: Int) -> Set<String> {
        Set(events(of: device).compactMap { if case .add(let id) = $0.kind { id } else { nil } })
    }

    func removed(on device: Int) -> Set<String> {
        Set(events(of: device).compactMap { if case .remove(let id) = $0.kind { id } else { nil } })
    }

    /// Added and not removed on any device this one has merged: there without fail.
    func present(on device: Int) -> Set<String> { added(on: device).subtracting(removed(on: device)) }

    /// Notes written on prescriptions that must be there: in their history.
    func notes(on device: Int) -> [(prescription: String, note: String)] {
        let present = present(on: device)
        return events(of: device).compactMap {
            if case .edit(let id, let note) = $0.kind, present.contains(id) { (id, note) } else { nil }
        }
    }

    /// Attachments attached and not detached, on prescriptions that must be there.
    func attachments(on device: Int) -> [String: Set<String>] {
        let present = present(on: device)
        var result: [String: Set<String>] = [:]
        var detached: Set<String> = []
        for event in events(of: device) {
            if case .detach(_, let a) = event.kind { detached.insert(a) }
        }
        for event in events(of: device) {
            if case .attach(let id, let a) = event.kind, present.contains(id), !detached.contains(a) {
                result[id, default: []].insert(a)
            }
        }
        return result
    }

    func measurements(on device: Int) -> Set<String> {
        var taken: Set<String> = []
        var removed: Set<String> = []
        for event in events(of: device) {
            switch event.kind {
            case .measurementAdd(let id): taken.insert(id)
            case .measurementRemove(let id): removed.insert(id)
            default: break
            }
        }
        return taken.subtracting(removed)
    }

    func clients(on device: Int) -> Set<String> {
        var added: Set<String> = []
        for event in events(of: device) {
            if case .clientAdd(let name) = event.kind { added.insert(name) }
        }
        return added.subtracting(removedClients(on: device))
    }

    func removedClients(on device: Int) -> Set<String> {
        Set(events(of: device).compactMap { if case .clientRemove(let name) = $0.kind { name } else { nil } })
    }

    /// The grant rows alive on a device for one client and prescription (each named by the
    /// event that made it).
    func liveRows(client: String, prescription: String, on device: Int) -> Set<Int> {
        let mine = events(of: device)
        var rows: Set<Int> = []
        for event in mine {
            if case .grant(client: client, prescription: prescription, newRow: true) = event.kind {
                rows.insert(event.id)
            }
        }
        for event in mine {
            switch event.kind {
            case .revoke(client: client, prescription: prescription): rows.subtract(event.past)
            // A removal ends every grant on the prescription it saw, even when the prescription
            // stays because another device edited it meanwhile (the owner took it away).
            case .remove(prescription): rows.subtract(event.past)
            default: break
            }
        }
        return rows
    }

    /// What a client reads on a device: every prescription with a live row (the prescription
    /// there, the client not removed). `existing`: what the device holds (a prescription the
    /// model cannot call present, removed on one device while edited on another, may be there).
    func granted(to client: String, on device: Int, existing: Set<String>) -> Set<String> {
        guard clients(on: device).contains(client) else { return [] }
        var result: Set<String> = []
        for event in events(of: device) {
            if case .grant(client: client, prescription: let id, newRow: _) = event.kind, existing.contains(id),
                !liveRows(client: client, prescription: id, on: device).isEmpty
            {
                result.insert(id)
            }
        }
        return result
    }
}
