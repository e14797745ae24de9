// Package imagegc is the reference model of the kubelet's image garbage
// collection (spec/imagegc.md §2, v1.36): for the records the kubelet holds,
// the images the runtime lists, the images in use, the policy, the time,
// the image filesystem and the removals that fail, Collect states the
// RemoveImage calls of one GarbageCollect or DeleteUnusedImages round in
// order, the bytes counted as freed, the error text and the records left.
//
// It has its own small types and never imports core/. Where core steps a
// pass image by image, the model filters first (the unused unpinned
// images, then the old ones, then the eligible ones) and sorts by one
// comparison key, so a shared mistake is unlikely. It models the plain-ID
// records (RuntimeClassInImageCriAPI off) and takes the images in use as a
// set, already worked out from containers and image volumes.
package imagegc
