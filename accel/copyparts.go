package accel

import "github.com/gxbit/gxbit/ptxgen"

// CopyPartsReport is ptxgen.CopyParts in seconds and bytes: where a hot
// spot's copy time went. The device's calls: allocating and freeing
// device memory, the copies each way and on the device (with their
// bytes, and how many there were each way), memsets; the guest memory's side: reading the bytes copied in
// (and comparing them with snapshots), writing back the bytes copied out,
// the page marks (stale, watched); other: the rest (the residency's own
// walks of its buffers and pages).
type CopyPartsReport struct {
	AllocSeconds          float64 `json:"alloc_seconds"`
	FreeSeconds           float64 `json:"free_seconds"`
	HostToDeviceSeconds   float64 `json:"h2d_seconds"`
	HostToDeviceBytes     uint64  `json:"h2d_bytes"`
	HostToDeviceCopies    uint64  `json:"h2d_copies"`
	DeviceToHostSeconds   float64 `json:"d2h_seconds"`
	DeviceToHostBytes     uint64  `json:"d2h_bytes"`
	DeviceToHostCopies    uint64  `json:"d2h_copies"`
	DeviceToDeviceSeconds float64 `json:"d2d_seconds"`
	DeviceToDeviceBytes   uint64  `json:"d2d_bytes"`
	DeviceToDeviceCopies  uint64  `json:"d2d_copies"`
	// Waits are the calls that waited for the device (ptxgen.CopyParts):
	// one a launch when all it copies is queued in front of its kernel.
	Waits             uint64  `json:"waits"`
	MemsetSeconds     float64 `json:"memset_seconds"`
	GuestReadSeconds  float64 `json:"guest_read_seconds"`
	GuestWriteSeconds float64 `json:"guest_write_seconds"`
	MarksSeconds      float64 `json:"marks_seconds"`
	OtherSeconds      float64 `json:"other_seconds"`
}

// add adds a launch's copy parts.
func (r *CopyPartsReport) add(p ptxgen.CopyParts) {
	r.AllocSeconds += p.Alloc.Seconds()
	r.FreeSeconds += p.Free.Seconds()
	r.HostToDeviceSeconds += p.HostToDevice.Seconds()
	r.HostToDeviceBytes += p.BytesHtoD
	r.HostToDeviceCopies += p.CopiesHtoD
	r.DeviceToHostSeconds += p.DeviceToHost.Seconds()
	r.DeviceToHostBytes += p.BytesDtoH
	r.DeviceToHostCopies += p.CopiesDtoH
	r.DeviceToDeviceSeconds += p.DeviceToDevice.Seconds()
	r.DeviceToDeviceBytes += p.BytesDtoD
	r.DeviceToDeviceCopies += p.CopiesDtoD
	r.Waits += p.Waits
	r.MemsetSeconds += p.Memset.Seconds()
	r.GuestReadSeconds += p.GuestRead.Seconds()
	r.GuestWriteSeconds += p.GuestWrite.Seconds()
	r.MarksSeconds += p.Marks.Seconds()
	r.OtherSeconds += p.Other.Seconds()
}
